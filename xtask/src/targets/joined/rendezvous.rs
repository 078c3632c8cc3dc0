//! Where the processes that share one target meet: a directory on this machine that a
//! coordinator and its N shard processes write small files into. A shard *arrives* at a named
//! step (a file holding its wall-clock time and a line of payload); a *meeting* ends when all N
//! have arrived, at an instant every shard computes alike (the latest arrival plus
//! [`START_MARGIN_MS`], in UTC), so their timetables start together in absolute time. The
//! coordinator *posts* steps (the table seeded, checked and indexed) that shards wait for, and
//! waits for all N to arrive at theirs. Every wait ends: when all have come, when anyone wrote
//! `abort` (its reason is the error), when the other side died, on Ctrl-C, or at the time limit.
//!
//! Written by hand: no crate offers a barrier between processes with a deadline, a reason to
//! abort and a start time in UTC; each file is a few bytes, written whole by a rename.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::base::clock::unix_ms_now;

/// How far after the last arrival a meeting starts: room for every shard to see the last file
/// (each looks every [`POLL`]) before the start.
pub const START_MARGIN_MS: f64 = 25.0;

/// How often a waiting process looks.
const POLL: Duration = Duration::from_millis(2);

/// Who is at the rendezvous.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Party {
    /// The process that started the target, seeds it and checks it.
    Coordinator,
    /// Shard K (from 1) of the load.
    Shard(u32),
}

/// One process's end of the rendezvous.
pub struct Rendezvous {
    dir: PathBuf,
    of: u32,
    party: Party,
    /// Longest any one wait may last.
    limit: Duration,
    /// What the shared run's Workers KV keys start with: the same in every process, so that
    /// their cached reads share one cache.
    generation: u64,
    /// What else ends a wait: the coordinator's shards exiting early, a shard's coordinator
    /// gone. An error here is the wait's error.
    watch: Box<dyn Fn() -> Result<()> + Send + Sync>,
}

impl Rendezvous {
    /// `party`'s end of the rendezvous in `dir` (created when missing) among `of` shards.
    pub fn new(
        dir: &Path,
        (of, party): (u32, Party),
        (limit, generation): (Duration, u64),
        watch: Box<dyn Fn() -> Result<()> + Send + Sync>,
    ) -> Result<Self> {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the rendezvous {}", dir.display()))?;
        Ok(Rendezvous {
            dir: dir.to_owned(),
            of,
            party,
            limit,
            generation,
            watch,
        })
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// A file of the rendezvous, for what a party hands over beside a step.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    pub fn party(&self) -> Party {
        self.party
    }

    pub fn of(&self) -> u32 {
        self.of
    }

    /// A shard notes it reached `step`, with `payload` (one line) for the others.
    pub fn arrive(&self, step: &str, payload: &str) -> Result<()> {
        let Party::Shard(k) = self.party else {
            bail!("the coordinator does not arrive at shards' steps ({step})");
        };
        anyhow::ensure!(
            !payload.contains('\n'),
            "a rendezvous payload is one line ({step})"
        );
        let dir = self.dir.join(step);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        write_whole(
            &dir.join(k.to_string()),
            &format!("{}\n{payload}", unix_ms_now()),
        )
    }

    /// A shard's meeting at `step`: arrives, waits for every shard, then sleeps until the start
    /// they all compute; every shard's payload, shard 1's first.
    pub fn meet(&self, step: &str, payload: &str) -> Result<Vec<String>> {
        self.arrive(step, payload)?;
        let arrivals = self.wait(step, || self.arrivals(step))?;
        let start = arrivals.iter().map(|a| a.0).fold(0.0, f64::max) + START_MARGIN_MS;
        let wait_ms = start - unix_ms_now();
        if wait_ms > 0.0 {
            std::thread::sleep(Duration::from_secs_f64(wait_ms / 1000.0));
        }
        Ok(arrivals.into_iter().map(|a| a.1).collect())
    }

    /// The coordinator waits until every shard arrived at `step`; their payloads in shard order.
    pub fn gather(&self, step: &str) -> Result<Vec<String>> {
        let arrivals = self.wait(step, || self.arrivals(step))?;
        Ok(arrivals.into_iter().map(|a| a.1).collect())
    }

    /// The coordinator says `step` is done.
    pub fn post(&self, step: &str) -> Result<()> {
        write_whole(&self.dir.join(format!("{step}.posted")), "")
    }

    /// A shard waits until the coordinator posted `step`.
    pub fn await_post(&self, step: &str) -> Result<()> {
        let posted = self.dir.join(format!("{step}.posted"));
        self.wait(&format!("{step} (posted by the coordinator)"), || {
            Ok(posted.exists().then_some(()))
        })
    }

    /// Ends every other party's wait with `reason`. The first reason written stays.
    pub fn abort(&self, reason: &str) {
        let path = self.dir.join("abort");
        if !path.exists() {
            let who = match self.party {
                Party::Coordinator => "the coordinator".to_owned(),
                Party::Shard(k) => format!("shard {k}/{}", self.of),
            };
            let _ = write_whole(&path, &format!("{who}: {reason}"));
        }
    }

    /// Every shard's (time, payload) at `step`, once all have arrived.
    fn arrivals(&self, step: &str) -> Result<Option<Vec<(f64, String)>>> {
        let dir = self.dir.join(step);
        let mut found = Vec::with_capacity(self.of as usize);
        for k in 1..=self.of {
            let path = dir.join(k.to_string());
            let Ok(text) = std::fs::read_to_string(&path) else {
                return Ok(None);
            };
            let (at, payload) = text.split_once('\n').unwrap_or((&text, ""));
            let at: f64 = at
                .parse()
                .with_context(|| format!("{}: not a time: {at:?}", path.display()))?;
            found.push((at, payload.to_owned()));
        }
        Ok(Some(found))
    }

    /// Polls `ready` until it gives something, or an abort, the watch, Ctrl-C or the limit ends
    /// the wait (naming `step` and who had not come).
    fn wait<T>(&self, step: &str, ready: impl Fn() -> Result<Option<T>>) -> Result<T> {
        let deadline = Instant::now() + self.limit;
        loop {
            if let Some(found) = ready()? {
                return Ok(found);
            }
            if let Ok(reason) = std::fs::read_to_string(self.dir.join("abort")) {
                bail!("the shared run was aborted at {step}: {reason}");
            }
            (self.watch)().with_context(|| format!("while waiting at {step}"))?;
            if crate::procs::interrupted() {
                bail!("interrupted while waiting at {step}");
            }
            if Instant::now() >= deadline {
                bail!(
                    "waited {} s at {step} for {}: the time limit of a wait at the rendezvous {}",
                    self.limit.as_secs(),
                    self.missing(step),
                    self.dir.display()
                );
            }
            std::thread::sleep(POLL);
        }
    }

    /// Who has not arrived at `step`, for an error.
    fn missing(&self, step: &str) -> String {
        let dir = self.dir.join(step);
        let missing: Vec<String> = (1..=self.of)
            .filter(|k| !dir.join(k.to_string()).exists())
            .map(|k| format!("{k}/{}", self.of))
            .collect();
        match missing.is_empty() {
            true => "the coordinator".to_owned(),
            false => format!("shard {}", missing.join(", ")),
        }
    }
}

/// Writes `text` to `path` so that a reader sees all of it or nothing (a rename).
fn write_whole(path: &Path, text: &str) -> Result<()> {
    let partial = path.with_extension(format!("partial-{}", std::process::id()));
    std::fs::write(&partial, text)
        .with_context(|| format!("cannot write {}", partial.display()))?;
    std::fs::rename(&partial, path).with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(dir: &Path, party: Party, limit_ms: u64) -> Rendezvous {
        Rendezvous::new(
            dir,
            (3, party),
            (Duration::from_millis(limit_ms), 0),
            Box::new(|| Ok(())),
        )
        .unwrap()
    }

    #[test]
    fn three_shards_meet_and_start_together_with_shard_1s_payload_first() {
        let dir = tempfile::tempdir().unwrap();
        let started: Vec<(Vec<String>, f64)> = std::thread::scope(|s| {
            let handles: Vec<_> = [3u32, 1, 2]
                .into_iter()
                .map(|k| {
                    let dir = dir.path();
                    s.spawn(move || {
                        std::thread::sleep(Duration::from_millis(20 * u64::from(k)));
                        let payloads = at(dir, Party::Shard(k), 5_000)
                            .meet("p1-measure", &format!("from {k}"))
                            .unwrap();
                        (payloads, unix_ms_now())
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let times: Vec<f64> = started.iter().map(|s| s.1).collect();
        let spread = times.iter().copied().fold(f64::MIN, f64::max)
            - times.iter().copied().fold(f64::MAX, f64::min);
        assert!(spread < START_MARGIN_MS, "started {spread} ms apart");
        for (payloads, _) in &started {
            assert_eq!(payloads, &["from 1", "from 2", "from 3"]);
        }
    }

    #[test]
    fn a_wait_ends_at_its_limit_naming_who_did_not_come() {
        let dir = tempfile::tempdir().unwrap();
        at(dir.path(), Party::Shard(2), 1_000)
            .arrive("size-1-done", "")
            .unwrap();
        let error = at(dir.path(), Party::Coordinator, 50)
            .gather("size-1-done")
            .unwrap_err();
        let text = format!("{error:#}");
        assert!(text.contains("shard 1/3, 3/3"), "{text}");
        assert!(text.contains("size-1-done"), "{text}");
    }

    #[test]
    fn an_abort_ends_the_others_waits_with_its_reason() {
        let dir = tempfile::tempdir().unwrap();
        at(dir.path(), Party::Coordinator, 1_000).abort("shard 2 exited with status 1");
        let error = at(dir.path(), Party::Shard(1), 60_000)
            .await_post("size-1")
            .unwrap_err();
        assert!(
            format!("{error:#}").contains("the coordinator: shard 2 exited with status 1"),
            "{error:#}"
        );
    }

    #[test]
    fn the_watch_ends_a_wait() {
        let dir = tempfile::tempdir().unwrap();
        let gone = Rendezvous::new(
            dir.path(),
            (2, Party::Shard(1)),
            (Duration::from_secs(60), 0),
            Box::new(|| bail!("the coordinator (pid 1) is gone")),
        )
        .unwrap();
        let error = gone.meet("p1-warmup", "").unwrap_err();
        assert!(format!("{error:#}").contains("is gone"), "{error:#}");
    }
}
