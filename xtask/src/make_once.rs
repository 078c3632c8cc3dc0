//! Makes a thing (an install, a build) at most once when several d1bench processes want it at the
//! same moment: two runs started together, or the end-to-end tests, which run six at once.
//!
//! Without it both would find the thing missing and make it side by side; a Worker build
//! rewriting `worker-pg/build/` under a `wrangler dev` that already serves it makes that Worker
//! restart mid-request (seen in CI on a fresh clone: the hyperdrive test's verification answered
//! 503 "Your worker restarted mid-request" while the remote-hyperdrive test built the same
//! Worker). An advisory lock on a file (`std::fs::File::lock`, flock on Linux) serialises them;
//! the kernel drops it when its holder exits, `kill -9` included, so no stale lock survives.

use std::path::Path;

use anyhow::{Context, Result};

/// Runs `make` unless `current()` says the thing is already there. When it is not, takes an
/// exclusive lock on `<lock_dir>/<name>.lock` (waiting for whoever holds it), asks `current()`
/// again (the holder may have just made it), and only then runs `make`, lock held.
pub fn make_once(
    lock_dir: &Path,
    name: &str,
    current: impl Fn() -> Result<bool>,
    make: impl FnOnce() -> Result<()>,
) -> Result<()> {
    if current()? {
        return Ok(());
    }
    std::fs::create_dir_all(lock_dir)
        .with_context(|| format!("cannot create {}", lock_dir.display()))?;
    let path = lock_dir.join(format!("{name}.lock"));
    let file = std::fs::File::create(&path)
        .with_context(|| format!("cannot open the lock file {}", path.display()))?;
    file.lock()
        .with_context(|| format!("cannot lock {}", path.display()))?;
    let outcome = if current()? { Ok(()) } else { make() };
    // Dropping the file unlocks it; said here so the lock visibly spans `make`.
    drop(file);
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Barrier;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    /// Four makers released at once: one makes the thing (slowly, so the others arrive while it
    /// is being made), the others wait and find it made.
    #[test]
    fn makers_started_together_make_the_thing_once() {
        let dir = tempfile::tempdir().unwrap();
        let stamp = dir.path().join("stamp");
        let made = AtomicUsize::new(0);
        let barrier = Barrier::new(4);
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    barrier.wait();
                    make_once(
                        dir.path(),
                        "thing",
                        || Ok(stamp.exists()),
                        || {
                            made.fetch_add(1, Ordering::SeqCst);
                            std::thread::sleep(Duration::from_millis(300));
                            std::fs::write(&stamp, "made")?;
                            Ok(())
                        },
                    )
                    .unwrap();
                });
            }
        });
        assert_eq!(made.load(Ordering::SeqCst), 1);
    }

    /// A failed make leaves the lock free and the thing missing: the next caller tries again.
    #[test]
    fn a_failed_make_is_tried_again_by_the_next_caller() {
        let dir = tempfile::tempdir().unwrap();
        let stamp = dir.path().join("stamp");
        let current = || Ok(stamp.exists());
        let failed = make_once(dir.path(), "thing", current, || anyhow::bail!("no space"));
        assert!(failed.unwrap_err().to_string().contains("no space"));
        make_once(dir.path(), "thing", current, || {
            std::fs::write(&stamp, "made")?;
            Ok(())
        })
        .unwrap();
        assert!(stamp.exists());
    }
}
