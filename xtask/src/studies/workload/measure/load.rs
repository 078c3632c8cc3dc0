//! The open-loop load generator: requests issued on a fixed timetable (request `i` is due at
//! `i ÷ rate` seconds), whatever the latency of earlier ones, each latency measured from when it
//! was due, so a slow answer cannot hide the queue behind it (coordinated omission). A
//! dispatcher sleeps to each due time and hands the request to a pool of at most
//! `max_in_flight` threads; a request that finds none free waits, and that wait is both in its
//! latency and in the generator's lag (sent − due), which the reports show, apart from the
//! dispatcher's own lateness (handed over − due).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, mpsc};
use std::time::{Duration, Instant};

use anyhow::Result;

/// One request's timing and answer.
#[derive(Debug)]
pub struct Done<T> {
    /// Its place in the timetable, from 0.
    pub seq: usize,
    /// When it was due, in ms since the load started.
    pub scheduled_ms: f64,
    /// Ms from due to sent: the generator's lag, its own lateness and the wait for a free
    /// thread together.
    pub lag_ms: f64,
    /// Ms from due to handed to the threads: the dispatcher's own lateness (what the generator
    /// itself could not keep up with), apart from waiting for a free thread (which is the
    /// target holding every thread: requests in flight at the cap).
    pub late_ms: f64,
    /// Ms from due to the whole answer.
    pub latency_ms: f64,
    /// Ms from sent to the whole answer.
    pub service_ms: f64,
    /// When it was sent and when its whole answer was in: what orders a read after a write
    /// across requests (the staleness of a cached read).
    pub sent_at: Instant,
    pub answered_at: Instant,
    pub answer: T,
}

/// What a load did as a whole.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoadRun {
    /// Requests sent (fewer than asked when interrupted).
    pub sent: usize,
    /// Ms from the load's start to the last answer.
    pub wall_ms: f64,
    /// CPU seconds of the threads that sent the requests and waited for their answers (with
    /// in-process SQLite as the target, they run its statements too), apart from the rest of
    /// the process: the timetable, and recording each answer.
    pub senders_cpu_s: f64,
}

/// When each request is due: job `j` at `offset_s + j ÷ per_s` seconds after the load starts.
/// A whole load starts at 0; shard K of N offers every Nth request of the whole timetable, at
/// the rate ÷ N, from K - 1 requests in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timetable {
    pub per_s: f64,
    pub offset_s: f64,
}

impl Timetable {
    /// `per_s` requests a second from the load's start.
    pub fn at(per_s: f64) -> Timetable {
        Timetable {
            per_s,
            offset_s: 0.0,
        }
    }

    /// Seconds from the load's start to when job `j` is due.
    pub fn due_s(&self, j: usize) -> f64 {
        self.offset_s + j as f64 / self.per_s
    }
}

/// Sends `jobs` on an open-loop `timetable`, at most `max_in_flight` at a
/// time, calling `each` on the caller's thread as each answer lands (in the order they land).
/// Stops scheduling when `stop` says so (Ctrl-C) or `each` fails; the requests already sent are
/// still waited for and passed to `each`. The first error of `each` is returned.
pub fn open_loop<J: Sync, T: Send>(
    jobs: &[J],
    timetable: Timetable,
    max_in_flight: usize,
    send: &(dyn Fn(&J) -> T + Sync),
    stop: &(dyn Fn() -> bool + Sync),
    mut each: impl FnMut(Done<T>, &J) -> Result<()>,
) -> Result<LoadRun> {
    assert!(timetable.per_s > 0.0 && timetable.offset_s >= 0.0 && max_in_flight > 0);
    // The timetable starts once the threads are up: starting them is not the target's lag.
    let start_at = std::sync::OnceLock::<Instant>::new();
    let halt = AtomicBool::new(false);
    let (due_tx, due_rx) = mpsc::channel::<(usize, Instant, Instant)>();
    let due_rx = Mutex::new(due_rx);
    let (done_tx, done_rx) = mpsc::channel::<Done<T>>();
    let mut first_error = None;
    let mut sent = 0;
    let senders_cpu_s = Mutex::new(0.0f64);
    std::thread::scope(|scope| {
        let halt = &halt;
        let start_at = &start_at;
        for _ in 0..max_in_flight.min(jobs.len()) {
            let done_tx = done_tx.clone();
            let due_rx = &due_rx;
            let senders_cpu_s = &senders_cpu_s;
            scope.spawn(move || {
                loop {
                    let next = due_rx.lock().map(|rx| rx.recv());
                    let Ok(Ok((seq, due, dispatched))) = next else {
                        break;
                    };
                    let start = *start_at.get().expect("set before anything is due");
                    let sent_at = Instant::now();
                    let answer = send(&jobs[seq]);
                    let answered = Instant::now();
                    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
                    let done = Done {
                        seq,
                        scheduled_ms: ms(due - start),
                        lag_ms: ms(sent_at.saturating_duration_since(due)),
                        late_ms: ms(dispatched.saturating_duration_since(due)),
                        latency_ms: ms(answered.saturating_duration_since(due)),
                        service_ms: ms(answered - sent_at),
                        sent_at,
                        answered_at: answered,
                        answer,
                    };
                    if done_tx.send(done).is_err() {
                        break;
                    }
                }
                if let Ok(mut total) = senders_cpu_s.lock() {
                    *total += crate::cpu::this_thread_s();
                }
            });
        }
        drop(done_tx);
        let start = *start_at.get_or_init(|| Instant::now() + Duration::from_millis(2));
        scope.spawn(move || {
            for seq in 0..jobs.len() {
                if halt.load(Ordering::Relaxed) || stop() {
                    break;
                }
                let due = start + Duration::from_secs_f64(timetable.due_s(seq));
                let now = Instant::now();
                if due > now {
                    std::thread::sleep(due - now);
                }
                if due_tx.send((seq, due, Instant::now())).is_err() {
                    break;
                }
            }
        });
        for done in done_rx {
            sent += 1;
            let seq = done.seq;
            if first_error.is_none()
                && let Err(e) = each(done, &jobs[seq])
            {
                halt.store(true, Ordering::Relaxed);
                first_error = Some(e);
            }
        }
    });
    let start = start_at.get().copied().unwrap_or_else(Instant::now);
    match first_error {
        Some(e) => Err(e),
        None => Ok(LoadRun {
            sent,
            wall_ms: start.elapsed().as_secs_f64() * 1000.0,
            senders_cpu_s: senders_cpu_s.into_inner().unwrap_or(0.0),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A target that takes 30 ms per request, one at a time, at 100 requests per second: a
    /// closed loop would report 30 ms every time; the open loop sees the queue grow by 20 ms a
    /// request and says the generator lagged.
    #[test]
    fn latency_counts_from_the_due_time_so_a_queue_shows() {
        let jobs: Vec<usize> = (0..20).collect();
        let mut seen = Vec::new();
        let run = open_loop(
            &jobs,
            Timetable::at(100.0),
            1,
            &|_| std::thread::sleep(Duration::from_millis(30)),
            &|| false,
            |done, _| {
                seen.push(done);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(run.sent, 20);
        seen.sort_by_key(|d| d.seq);
        for d in &seen {
            assert!(d.service_ms >= 29.0, "{d:?}");
            // Request i is sent at about 30·i ms, due at 10·i ms.
            let queue = 20.0 * d.seq as f64;
            assert!(d.lag_ms >= queue - 5.0, "{d:?}");
            assert!(d.latency_ms >= queue + 29.0, "{d:?}");
        }
        assert!(seen[19].latency_ms > 400.0);
    }

    /// The sending threads' CPU is their own, summed as each ends: each request here spins
    /// until its thread has used 20 ms more CPU (on the thread's own clock, whatever the
    /// machine's load), so 6 requests on 3 threads take at least 0.12 CPU s among the senders,
    /// and a sleeping target takes almost none.
    #[test]
    fn the_senders_cpu_is_counted_from_each_threads_own_times() {
        let jobs: Vec<usize> = (0..6).collect();
        let spin = |_: &usize| {
            let until = crate::cpu::this_thread_s() + 0.02;
            while crate::cpu::this_thread_s() < until {
                std::hint::black_box(0u64);
            }
        };
        let run = open_loop(&jobs, Timetable::at(1000.0), 3, &spin, &|| false, |_, _| {
            Ok(())
        })
        .unwrap();
        assert!(run.senders_cpu_s >= 0.12, "{run:?}");
        let idle = open_loop(
            &jobs,
            Timetable::at(1000.0),
            3,
            &|_| std::thread::sleep(Duration::from_millis(20)),
            &|| false,
            |_, _| Ok(()),
        )
        .unwrap();
        assert!(idle.senders_cpu_s < run.senders_cpu_s / 2.0, "{idle:?}");
    }

    /// With enough threads the timetable is kept: requests leave while earlier ones are still
    /// unanswered, so the generator's lag does not grow with the answers' time. Shown without
    /// trusting the machine's timing: the first 8 requests each wait until all 8 are in flight
    /// at once, which a generator that waited for answers could never reach (each would wait out
    /// its 10 s). The lag bound is far from a closed loop's (request i would leave after i
    /// answers of 40 ms: a median lag near 700 ms).
    #[test]
    fn with_threads_free_the_timetable_is_kept() {
        use std::sync::Condvar;
        let jobs: Vec<usize> = (0..40).collect();
        let together = (Mutex::new(0usize), Condvar::new());
        let mut lags = Vec::new();
        let run = open_loop(
            &jobs,
            Timetable::at(200.0),
            16,
            &|&i| {
                if i < 8 {
                    let (count, all_in) = &together;
                    let mut n = count.lock().unwrap();
                    *n += 1;
                    all_in.notify_all();
                    let (n, waited) = all_in
                        .wait_timeout_while(n, Duration::from_secs(10), |n| *n < 8)
                        .unwrap();
                    assert!(
                        !waited.timed_out(),
                        "only {} of 8 requests were in flight",
                        *n
                    );
                } else {
                    std::thread::sleep(Duration::from_millis(40));
                }
            },
            &|| false,
            |done, _| {
                lags.push(done.lag_ms);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(run.sent, 40);
        lags.sort_by(f64::total_cmp);
        assert!(lags[lags.len() / 2] < 200.0, "{lags:?}");
    }

    #[test]
    fn an_error_stops_the_schedule_and_is_returned() {
        let jobs: Vec<usize> = (0..1000).collect();
        let mut n = 0;
        let err = open_loop(
            &jobs,
            Timetable::at(1000.0),
            4,
            &|_| (),
            &|| false,
            |_, _| {
                n += 1;
                if n == 3 {
                    anyhow::bail!("disk full")
                } else {
                    Ok(())
                }
            },
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "disk full");
    }
}
