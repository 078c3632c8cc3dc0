//! Where probes run, as the measuring loop sees it: the Worker over HTTP, or SQLite in-process.

use d1bench_core::{ProbeRequest, VerifyResult};

use crate::client::{Timed, WorkerClient};

/// Something that performs probes and verifies what they left.
pub trait ProbeTarget {
    /// Performs one probe, timed from the outside; the probe's table stays for [`Self::verify`].
    fn probe(&self, probe: &ProbeRequest) -> Timed;
    /// Computes the content checksum of the probe's table in SQL, then drops the table.
    fn verify(&self, probe: &ProbeRequest) -> Result<VerifyResult, String>;
    /// Whether results carry D1's own clock (`d1_ms`).
    fn has_d1_clock(&self) -> bool;
}

impl ProbeTarget for WorkerClient {
    fn probe(&self, probe: &ProbeRequest) -> Timed {
        WorkerClient::probe(self, probe)
    }

    fn verify(&self, probe: &ProbeRequest) -> Result<VerifyResult, String> {
        WorkerClient::verify(self, probe)
    }

    fn has_d1_clock(&self) -> bool {
        true
    }
}
