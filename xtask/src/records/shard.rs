//! Shards on disk: a workload run's place among the processes that share its load (`--shard
//! K/N`, run.toml's `[run] shard = "K/N"`), what a merged run records of the shard runs it was
//! made from (`[merged]`), and the one error that makes both commands exit 2.

use serde::{Deserialize, Serialize};

use crate::base::text::serde_as_text;
use crate::records::RunStatus;

/// Most shards a plan may be split into: one runner each in a GitHub Actions matrix, whose
/// jobs are capped at 256; 64 keeps a merge's files few enough to read at once.
pub const MAX_SHARDS: u32 = 64;

/// Shard `index` of `of` (both from 1): the requests of each timetable whose place from 0 is
/// `index - 1` modulo `of`. Written `K/N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Shard {
    pub index: u32,
    pub of: u32,
}

impl Shard {
    /// The whole load: what a run without `--shard` is.
    pub const WHOLE: Shard = Shard { index: 1, of: 1 };

    /// Whether request `seq` (its place in the whole timetable, from 0) is this shard's.
    pub fn takes(self, seq: usize) -> bool {
        seq % self.of as usize == (self.index - 1) as usize
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.of)
    }
}

impl std::str::FromStr for Shard {
    type Err = String;
    /// `K/N` with 1 ≤ K ≤ N ≤ [`MAX_SHARDS`]; the error says which part is wrong.
    fn from_str(s: &str) -> Result<Shard, String> {
        let Some((k, n)) = s.split_once('/') else {
            return Err(format!(
                "`{s}` is not K/N: a shard is written as its number and the count of shards, \
                 e.g. 2/4"
            ));
        };
        let number = |part: &str, what: &str| {
            part.trim().parse::<u32>().map_err(|_| {
                format!("`{s}`: {what} `{part}` is not a whole number (K/N, e.g. 2/4)")
            })
        };
        let (index, of) = (number(k, "K")?, number(n, "N")?);
        if of == 0 {
            return Err(format!("`{s}`: N is the count of shards, at least 1"));
        }
        if of > MAX_SHARDS {
            return Err(format!(
                "`{s}`: at most {MAX_SHARDS} shards (one runner each)"
            ));
        }
        if index == 0 {
            return Err(format!(
                "`{s}`: shards count from 1, so K is 1 to {of} (1/{of} to {of}/{of})"
            ));
        }
        if index > of {
            return Err(format!(
                "`{s}` names shard {index} of {of}: K is 1 to N (1/{of} to {of}/{of})"
            ));
        }
        Ok(Shard { index, of })
    }
}

serde_as_text!(Shard);

/// What a merged run records of how it was made: `[merged]` in its run.toml.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Merged {
    /// N: the shards the plan was split into.
    pub of: u32,
    /// The shard runs merged, in shard order.
    pub shards: Vec<MergedShard>,
    /// The shards no run was given for (`cargo xtask merge --allow-missing`); their requests
    /// were never offered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<u32>,
    /// Whether the shards loaded one target together (`run --shards N`), which a coordinator
    /// started, seeded and checked with every shard's writes (checks.csv is its); otherwise each
    /// shard loaded a target of its own.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shared_target: bool,
}

/// One shard run a merged run was made from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MergedShard {
    /// K.
    pub index: u32,
    /// The shard run's id (its directory's name) and the directory as `merge` was given it.
    pub run: String,
    pub dir: String,
    pub status: RunStatus,
    /// When the shard's clock started (UTC, ms since the Unix epoch), and how many ms after
    /// the earliest shard's: its records' `sent_ms` and `answered_ms` were moved by that much.
    pub clock_zero_unix_ms: f64,
    pub clock_offset_ms: f64,
    /// The CPU the shard ran on and how many of them (each shard its own machine in CI).
    pub cpu: String,
    pub cpus: usize,
}

/// Input the shard commands refuse (a bad `--shard`, shards that do not make one run): the
/// process exits 2, as for a bad flag, with this message.
#[derive(Debug)]
pub struct ShardRefusal(pub String);

impl std::fmt::Display for ShardRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ShardRefusal {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k_of_n_parses_and_every_bad_form_says_what_is_wrong() {
        assert_eq!("2/4".parse(), Ok(Shard { index: 2, of: 4 }));
        assert_eq!("1/1".parse(), Ok(Shard::WHOLE));
        let err = |s: &str| s.parse::<Shard>().unwrap_err();
        assert!(err("x").contains("is not K/N"), "{}", err("x"));
        assert!(err("0/2").contains("count from 1"), "{}", err("0/2"));
        assert!(err("3/2").contains("names shard 3 of 2"), "{}", err("3/2"));
        assert!(err("1/0").contains("at least 1"), "{}", err("1/0"));
        assert!(err("a/2").contains("K `a`"), "{}", err("a/2"));
        assert!(err("1/65").contains("at most 64"), "{}", err("1/65"));
    }

    #[test]
    fn the_shards_of_n_take_every_request_once() {
        let shards: Vec<Shard> = (1..=3).map(|index| Shard { index, of: 3 }).collect();
        for seq in 0..30 {
            assert_eq!(shards.iter().filter(|s| s.takes(seq)).count(), 1);
        }
        assert!(shards[1].takes(4) && !shards[1].takes(5));
        assert!((0..10).all(|seq| Shard::WHOLE.takes(seq)));
    }
}
