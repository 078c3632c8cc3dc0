//! Retries in the load generator, as a client retries: each attempt a separate request to the
//! target (a separate Worker invocation over HTTP, or REST API call), the waits between them
//! from the point's [`RetryPolicy`] (or longer, when a 429 says how long), and only a refusal
//! the policy retries (what D1 says to retry, and what the policy opts in to with
//! `also-retry`) or no answer at all sent again. The attempts' time runs inside the request's
//! latency, which the load generator measures from when the request was due.

use std::time::Duration;

use d1bench_core::workload::{OpRequest, OpResult};
use d1bench_core::{Outcome, RefusalKind};

use crate::studies::workload::RetryPolicy;
use crate::targets::Timed;

/// One request's attempts: the last answer, how many attempts it took, and what refused the
/// first attempt.
#[derive(Debug)]
pub struct Attempted {
    pub last: Timed<OpResult>,
    pub attempts: u32,
    /// The first attempt's refusal class, when it was refused (what a client without retries
    /// would have seen).
    pub first_refusal: Option<RefusalKind>,
    /// Whether the first attempt got no answer.
    pub first_failed: bool,
    /// Ms spent waiting between attempts.
    pub waited_ms: f64,
}

/// Whether `policy` sends an answer again: a refusal it retries, or no answer at all (the write
/// may or may not have landed, which the idempotent write makes safe to send again).
pub fn retryable(answer: &Timed<OpResult>, policy: &RetryPolicy) -> bool {
    match &answer.result {
        Err(_) => true,
        Ok(r) => r.outcome == Outcome::Refused && r.refusal.is_some_and(|k| policy.retries(k)),
    }
}

/// Sends `job` with `send`, again after each retryable answer while `policy` allows, waiting
/// between attempts; `rng` draws the jitter.
pub fn attempt(
    job: &OpRequest,
    policy: &RetryPolicy,
    rng: fastrand::Rng,
    send: &dyn Fn(&OpRequest) -> Timed<OpResult>,
) -> Attempted {
    attempt_told(job, policy, rng, &|j| (send(j), None))
}

/// An answer, and how long it says to wait before the next attempt.
pub type Told = (Timed<OpResult>, Option<Duration>);

/// [`attempt`] where an answer may also say how long to wait before the next attempt (the REST
/// API's `Retry-After` on a 429): the wait is then the longer of that and the policy's.
pub fn attempt_told(
    job: &OpRequest,
    policy: &RetryPolicy,
    mut rng: fastrand::Rng,
    send: &dyn Fn(&OpRequest) -> Told,
) -> Attempted {
    let (mut last, mut told) = send(job);
    let first_refusal = last.result.as_ref().ok().and_then(|r| r.refusal);
    let first_failed = last.result.is_err();
    let mut attempts = 1;
    let mut waited_ms = 0.0;
    while retryable(&last, policy) {
        let Some(wait) = policy.wait_ms(attempts, &mut rng) else {
            break;
        };
        let wait = told.map_or(wait, |t| wait.max(t.as_secs_f64() * 1000.0));
        std::thread::sleep(Duration::from_secs_f64(wait / 1000.0));
        waited_ms += wait;
        attempts += 1;
        (last, told) = send(job);
    }
    Attempted {
        last,
        attempts,
        first_refusal,
        first_failed,
        waited_ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::studies::workload::RetryKind;
    use d1bench_core::workload::{FIRST_WRITE_ID, Operation, Preparation, TableSpec};
    use std::cell::Cell;

    fn job() -> OpRequest {
        OpRequest {
            spec: TableSpec {
                columns: 3,
                row_bytes: 64,
                seed: 1,
                groups: 10,
            },
            op: Operation::Write,
            key: FIRST_WRITE_ID,
            rows: 1,
            preparation: Preparation::Reuse,
            version: 0,
            cache: None,
            session: Default::default(),
            index: None,
        }
    }

    fn answer(refusal: Option<RefusalKind>) -> Timed<OpResult> {
        let mut r = crate::targets::workload::no_answer(String::new());
        r.outcome = if refusal.is_some() {
            Outcome::Refused
        } else {
            Outcome::Ok
        };
        r.refusal = refusal;
        Timed {
            outside_ms: 0.0,
            result: Ok(r),
        }
    }

    /// A fixed 1 ms delay that also retries SQLite's held lock and D1's queue.
    fn fixed(attempts: u32) -> RetryPolicy {
        RetryPolicy {
            kind: RetryKind::Fixed,
            max_attempts: attempts,
            delay_ms: 1.0,
            cap_ms: 1.0,
            seed: 1,
            also_retry: vec![RefusalKind::Busy, RefusalKind::Overloaded].into(),
        }
    }

    #[test]
    fn what_d1_says_to_retry_is_retried_and_what_it_says_not_to_is_not_unless_opted_in() {
        let plain = RetryPolicy {
            also_retry: Default::default(),
            ..fixed(4)
        };
        let calls = Cell::new(0);
        let lost = |_: &OpRequest| {
            calls.set(calls.get() + 1);
            answer((calls.get() < 2).then_some(RefusalKind::NetworkLost))
        };
        let done = attempt(&job(), &plain, fastrand::Rng::with_seed(1), &lost);
        assert_eq!(done.attempts, 2);
        assert_eq!(done.first_refusal, Some(RefusalKind::NetworkLost));
        for kind in [
            RefusalKind::Overloaded,
            RefusalKind::Busy,
            RefusalKind::MemoryLimit,
        ] {
            let refused = |_: &OpRequest| answer(Some(kind));
            let done = attempt(&job(), &plain, fastrand::Rng::with_seed(1), &refused);
            assert_eq!(done.attempts, 1, "{kind}");
        }
    }

    #[test]
    fn a_rate_limited_write_waits_as_long_as_the_api_says_then_passes() {
        let calls = Cell::new(0);
        let send = |_: &OpRequest| {
            calls.set(calls.get() + 1);
            let limited = calls.get() < 2;
            (
                answer(limited.then_some(RefusalKind::RateLimited)),
                limited.then_some(Duration::from_millis(30)),
            )
        };
        let plain = RetryPolicy {
            also_retry: Default::default(),
            ..fixed(4)
        };
        let started = std::time::Instant::now();
        let done = attempt_told(&job(), &plain, fastrand::Rng::with_seed(1), &send);
        assert!(started.elapsed() >= Duration::from_millis(30));
        assert_eq!(done.attempts, 2);
        assert_eq!(done.first_refusal, Some(RefusalKind::RateLimited));
        assert_eq!(
            done.waited_ms, 30.0,
            "the API's 30 ms, not the policy's 1 ms"
        );
        // Without a policy that retries, the 429 is final.
        calls.set(0);
        let none = attempt_told(
            &job(),
            &RetryPolicy::NONE,
            fastrand::Rng::with_seed(1),
            &send,
        );
        assert_eq!(none.attempts, 1);
    }

    #[test]
    fn a_busy_write_is_sent_again_until_it_passes() {
        let calls = Cell::new(0);
        let send = |_: &OpRequest| {
            calls.set(calls.get() + 1);
            answer((calls.get() < 3).then_some(RefusalKind::Busy))
        };
        let done = attempt(&job(), &fixed(5), fastrand::Rng::with_seed(1), &send);
        assert_eq!(done.attempts, 3);
        assert_eq!(done.first_refusal, Some(RefusalKind::Busy));
        assert_eq!(done.last.result.unwrap().outcome, Outcome::Ok);
        assert_eq!(done.waited_ms, 2.0);
    }

    #[test]
    fn the_cap_stops_the_attempts_and_a_limit_is_never_retried() {
        let calls = Cell::new(0);
        let busy = |_: &OpRequest| {
            calls.set(calls.get() + 1);
            answer(Some(RefusalKind::Overloaded))
        };
        let done = attempt(&job(), &fixed(4), fastrand::Rng::with_seed(1), &busy);
        assert_eq!((done.attempts, calls.get()), (4, 4));
        assert_eq!(done.last.result.unwrap().outcome, Outcome::Refused);
        let limit = |_: &OpRequest| answer(Some(RefusalKind::TooManyVariables));
        assert_eq!(
            attempt(&job(), &fixed(4), fastrand::Rng::with_seed(1), &limit).attempts,
            1
        );
        let none = attempt(
            &job(),
            &RetryPolicy::NONE,
            fastrand::Rng::with_seed(1),
            &busy,
        );
        assert_eq!(none.attempts, 1);
    }

    /// Real SQLite contention: a second connection holds the write lock, and the workload's
    /// write is refused as `busy` from SQLite's own text; sent again under a fixed delay after
    /// the lock is let go, it lands, once, and the exactly-once reconciliation agrees.
    #[test]
    fn a_held_write_lock_is_a_busy_refusal_and_a_retry_gets_through_once() {
        use crate::studies::workload::measure::exactly_once::{Writes, reconcile};
        use crate::targets::sqlite::workload::SqliteWorkload;
        use crate::targets::workload::WorkloadClient;
        use d1bench_core::workload::{CheckRequest, SeedRequest};

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("wl.sqlite");
        let client = SqliteWorkload::open_file(&path).unwrap();
        let spec = job().spec;
        let seeded = client
            .seed(&SeedRequest {
                spec,
                create: true,
                from: 1,
                to: 50,
            })
            .unwrap();
        assert_eq!(seeded.error, None);
        let holder = rusqlite::Connection::open(&path).unwrap();
        holder.execute_batch("BEGIN IMMEDIATE").unwrap();

        // Without retries the write is refused, and the class is busy.
        let refused = attempt(
            &job(),
            &RetryPolicy::NONE,
            fastrand::Rng::with_seed(1),
            &|j| client.op(j),
        );
        let answer = refused.last.result.as_ref().unwrap();
        assert_eq!(answer.outcome, Outcome::Refused, "{answer:?}");
        assert_eq!(answer.refusal, Some(RefusalKind::Busy), "{answer:?}");
        assert_eq!(refused.attempts, 1);

        // With retries, the lock let go after about 60 ms: refused first, then acknowledged.
        let releaser = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(60));
            holder.execute_batch("COMMIT").unwrap();
        });
        let policy = RetryPolicy {
            kind: RetryKind::Fixed,
            max_attempts: 20,
            delay_ms: 15.0,
            cap_ms: 15.0,
            seed: 1,
            also_retry: vec![RefusalKind::Busy].into(),
        };
        let retried = attempt(&job(), &policy, fastrand::Rng::with_seed(1), &|j| {
            client.op(j)
        });
        releaser.join().unwrap();
        assert_eq!(retried.first_refusal, Some(RefusalKind::Busy));
        assert!(retried.attempts > 1, "{retried:?}");
        let answer = retried.last.result.as_ref().unwrap();
        assert_eq!(answer.outcome, Outcome::Ok, "{answer:?}");
        assert_eq!(answer.changes, 1);

        // The same write sent again (a retry after a lost answer) changes nothing.
        let again = client.op(&job()).result.unwrap();
        assert_eq!((again.outcome, again.changes), (Outcome::Ok, 0));
        let present = client.check(&CheckRequest { spec, drop: false }).unwrap();
        assert_eq!(present.rows_present, 51);
        assert_eq!(present.write_ids, [FIRST_WRITE_ID]);
        let writes = Writes {
            acknowledged: [FIRST_WRITE_ID].into(),
            attempted: [FIRST_WRITE_ID].into(),
        };
        assert!(reconcile(&writes, &present.write_ids).exactly_once());
    }
}
