//! The harness's self-test: a deliberate corruption of every probe's table, which reconciliation
//! must catch.

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

/// A deliberate corruption of every probe's table, to prove that reconciliation catches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DebugCorruption {
    /// Change the last byte of the first row's first text value.
    TextByte,
    /// Add one to the first row's first integer (needs 3 columns or more).
    Integer,
    /// Swap the first text value between the first two rows (needs 2 rows or more).
    SwapRows,
    /// Swap the first two text values of the first row (needs 2 columns or more).
    SwapColumns,
}
