//! The Worker isolate's heap, sampled through the V8 inspector that `wrangler dev` opens: while
//! a measured request runs, a thread asks the inspector for `Runtime.getHeapUsage` over the
//! Chrome DevTools Protocol every few milliseconds and keeps the largest answer. Before the
//! request is sent, a full garbage collection (`HeapProfiler.collectGarbage`) clears what earlier
//! requests left, so every request starts from the isolate's live heap; during it, the heap in
//! use counts what V8 has not collected yet, so a peak is an upper bound of what the request
//! held alive (two runs of one rung can differ by the garbage collector's timing).
//!
//! What is measured is V8's own account of the isolate: the JavaScript heap in use
//! (`usedSize`) and, where V8 reports it, the memory of the isolate's ArrayBuffers
//! (`backingStorageSize`: the Worker's wasm linear memory lives in one). The isolate runs one
//! request at a time here, so an answer taken while the request waits on D1 sees what the
//! request built; an answer cannot be taken while the isolate runs without yielding, so a peak
//! inside a synchronous stretch that is freed before its next `await` is missed.

use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use serde::Deserialize;
use tungstenite::{Message, WebSocket};

/// Time between one answer and the next question.
const INTERVAL: Duration = Duration::from_millis(10);

/// How long a read waits before the thread looks whether it was asked to stop.
const READ_WAIT: Duration = Duration::from_millis(50);

/// Longest the connection to the inspector may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The id of the next question: unique over the run, so an answer that comes late (after its
/// sampling stopped) is never taken for the answer to a later question on the same connection.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// The question for the heap's usage.
const GET_HEAP_USAGE: &str = "Runtime.getHeapUsage";

/// The question for a full garbage collection.
const COLLECT_GARBAGE: &str = "HeapProfiler.collectGarbage";

/// One answer to `Runtime.getHeapUsage`, in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HeapUsage {
    /// Bytes of the JavaScript heap in use.
    pub used_size: u64,
    /// Bytes the JavaScript heap holds from the system (in use or not).
    pub total_size: u64,
    /// Bytes of ArrayBuffer backing stores (the wasm memory among them); 0 where V8 does not
    /// report it.
    #[serde(default)]
    pub backing_storage_size: u64,
}

impl HeapUsage {
    /// What counts against the isolate's memory: the heap in use and the ArrayBuffers.
    pub fn isolate_bytes(&self) -> u64 {
        self.used_size + self.backing_storage_size
    }
}

/// What a sampled request used: the largest of its answers, and how many there were.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HeapPeak {
    /// The largest [`HeapUsage::isolate_bytes`] answered while the request ran.
    pub isolate_bytes: u64,
    /// The largest `usedSize` (JavaScript heap in use) answered while the request ran.
    pub used_bytes: u64,
    /// Answers taken.
    pub samples: usize,
}

impl HeapPeak {
    fn note(&mut self, usage: HeapUsage) {
        self.isolate_bytes = self.isolate_bytes.max(usage.isolate_bytes());
        self.used_bytes = self.used_bytes.max(usage.used_size);
        self.samples += 1;
    }
}

/// The inspector of one `wrangler dev`, found at its port: connects when a request is sampled,
/// keeps the connection for the next one, and connects again after it broke (wrangler restarts
/// workerd under it).
pub struct HeapSampler {
    port: u16,
    /// Boxed: a WebSocket's buffers are several hundred bytes, kept apart from the handle.
    socket: Option<Box<WebSocket<TcpStream>>>,
}

/// A sampling under way; [`Sampling::stop`] ends it and gives the peak.
pub struct Sampling {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<(Box<WebSocket<TcpStream>>, Result<HeapPeak>)>,
}

/// The inspector's list of what it can debug (`/json`): the first entry is the Worker.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct InspectorTarget {
    web_socket_debugger_url: String,
}

impl HeapSampler {
    /// The sampler of the inspector on `127.0.0.1:port` (not connected yet).
    pub fn new(port: u16) -> Self {
        HeapSampler { port, socket: None }
    }

    /// Collects the isolate's garbage, then starts sampling; the peak is [`Self::finish`]'s.
    pub fn start(&mut self) -> Result<Sampling> {
        let mut socket = match self.socket.take() {
            Some(socket) => socket,
            None => Box::new(self.connect()?),
        };
        // Answered once the collection is done; a collection that takes longer than the wait
        // for a last answer goes on while the request starts.
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        ask(
            &mut socket,
            id,
            COLLECT_GARBAGE,
            &AtomicBool::new(true),
            true,
        )?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("heap sampler".into())
            .spawn(move || sample(socket, &flag))
            .context("cannot start the heap sampler's thread")?;
        Ok(Sampling { stop, thread })
    }

    /// Stops `sampling` (after one last answer) and gives its peak; the connection is kept for
    /// the next request when it still works.
    pub fn finish(&mut self, sampling: Sampling) -> Result<HeapPeak> {
        sampling.stop.store(true, Ordering::Relaxed);
        let (socket, peak) = sampling
            .thread
            .join()
            .map_err(|_| anyhow!("the heap sampler's thread panicked"))?;
        if peak.is_ok() {
            self.socket = Some(socket);
        }
        peak
    }

    fn connect(&self) -> Result<WebSocket<TcpStream>> {
        let list_url = format!("http://127.0.0.1:{}/json", self.port);
        let list = ureq::get(&list_url)
            .config()
            .timeout_global(Some(CONNECT_TIMEOUT))
            .build()
            .call()
            .and_then(|mut answer| answer.body_mut().read_to_string())
            .with_context(|| format!("cannot read the inspector's targets at {list_url}"))?;
        let targets: Vec<InspectorTarget> = serde_json::from_str(&list).with_context(|| {
            format!("the inspector's targets at {list_url} are not a list: {list}")
        })?;
        let url = &targets
            .first()
            .with_context(|| format!("the inspector at {list_url} lists no target"))?
            .web_socket_debugger_url;
        connect(url)
    }
}

/// A WebSocket to the inspector at `url` (`ws://host:port/path`), its reads bounded by
/// [`READ_WAIT`].
fn connect(url: &str) -> Result<WebSocket<TcpStream>> {
    let address = url
        .strip_prefix("ws://")
        .and_then(|rest| rest.split('/').next())
        .with_context(|| format!("the inspector's WebSocket {url} is not ws://host:port/…"))?;
    let stream = TcpStream::connect(address)
        .with_context(|| format!("cannot connect to the inspector at {address}"))?;
    stream.set_read_timeout(Some(CONNECT_TIMEOUT))?;
    let (socket, _) = tungstenite::client(url, stream)
        .map_err(|e| anyhow!("the inspector at {url} refused the WebSocket: {e}"))?;
    socket.get_ref().set_read_timeout(Some(READ_WAIT))?;
    Ok(socket)
}

/// Asks for the heap's usage until `stop` is set, then once more, and keeps the largest answer.
fn sample(
    mut socket: Box<WebSocket<TcpStream>>,
    stop: &AtomicBool,
) -> (Box<WebSocket<TcpStream>>, Result<HeapPeak>) {
    let mut peak = HeapPeak::default();
    let result = loop {
        let last = stop.load(Ordering::Relaxed);
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let usage = ask(&mut socket, id, GET_HEAP_USAGE, stop, last).and_then(|answer| {
            answer
                .map(|result| {
                    serde_json::from_value::<HeapUsage>(result.clone()).with_context(|| {
                        format!(
                            "the inspector answered {GET_HEAP_USAGE} without its sizes: {result}"
                        )
                    })
                })
                .transpose()
        });
        match usage {
            Ok(Some(usage)) => peak.note(usage),
            Ok(None) => {}
            Err(e) => break Err(e),
        }
        if last {
            break Ok(peak);
        }
        std::thread::sleep(INTERVAL);
    };
    (socket, result)
}

/// Sends question `id` (`method`, without parameters) and reads until its answer's result;
/// `None` when it did not come within a second of [`READ_WAIT`]s after `stop` was set or, for
/// the `last` question, after it was sent (the isolate was busy).
fn ask(
    socket: &mut WebSocket<TcpStream>,
    id: u64,
    method: &str,
    stop: &AtomicBool,
    last: bool,
) -> Result<Option<serde_json::Value>> {
    let question = format!(r#"{{"id":{id},"method":"{method}"}}"#);
    socket
        .send(Message::text(question))
        .with_context(|| format!("cannot ask the inspector for {method}"))?;
    let mut waits_after_stop = 0;
    loop {
        match socket.read() {
            Ok(Message::Text(text)) => {
                if let Some(result) = answer_to(&text, id, method)? {
                    return Ok(Some(result));
                }
            }
            Ok(Message::Close(frame)) => bail!("the inspector closed the connection: {frame:?}"),
            Ok(_) => {}
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                if stop.load(Ordering::Relaxed) || last {
                    waits_after_stop += 1;
                    if waits_after_stop > 20 {
                        return Ok(None);
                    }
                }
            }
            Err(e) => bail!("cannot read the inspector's answer: {e}"),
        }
    }
}

/// The result in `text` when it is the answer to question `id` (`method`); `None` for any
/// other message (events, answers to older questions, to wrangler's own); an error when the
/// inspector answered `id` with an error or with nothing.
fn answer_to(text: &str, id: u64, method: &str) -> Result<Option<serde_json::Value>> {
    #[derive(Deserialize)]
    struct Answer {
        id: Option<u64>,
        result: Option<serde_json::Value>,
        error: Option<serde_json::Value>,
    }
    let answer: Answer = serde_json::from_str(text)
        .with_context(|| format!("the inspector sent something that is not CDP JSON: {text}"))?;
    if answer.id != Some(id) {
        return Ok(None);
    }
    match (answer.result, answer.error) {
        (Some(result), None) => Ok(Some(result)),
        (_, Some(error)) => bail!("the inspector refused {method}: {error}"),
        (None, None) => bail!("the inspector answered {method} with nothing: {text}"),
    }
}

#[cfg(test)]
mod tests {
    use std::net::TcpListener;

    use super::*;
    use crate::targets::loopback;

    /// What the test tells the stand-in, and what it tells the test.
    #[derive(Default)]
    struct Shared {
        /// Questions answered so far.
        answered: AtomicU64,
        /// Answer every question for the heap from now on with an error.
        refuse: AtomicBool,
        /// Garbage collections asked for so far.
        collections: AtomicU64,
    }

    /// An inspector stand-in on a loopback port: `/json` on the first connection, then a
    /// WebSocket that answers each `Runtime.getHeapUsage` with the next of `used` (round and
    /// round, with ArrayBuffers of 1,000 bytes) or, once told to refuse, with an error; each
    /// after an event and an answer to a question it was not asked (as wrangler's proxy sends
    /// its own). Gives the port and, when the socket closes, the questions' ids.
    fn inspector(used: Vec<u64>, shared: Arc<Shared>) -> (u16, std::thread::JoinHandle<Vec<u64>>) {
        let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let thread = std::thread::spawn(move || {
            let (list, _) = listener.accept().unwrap();
            let request = loopback::read_request(&list);
            assert!(request.starts_with("GET /json "), "{request}");
            let ws = format!(
                r#"[{{"id":"w","type":"node","webSocketDebuggerUrl":"ws://127.0.0.1:{port}/ws"}}]"#
            );
            loopback::answer(&list, 200, &ws);
            drop(list);
            let (stream, _) = listener.accept().unwrap();
            let mut socket = tungstenite::accept(stream).unwrap();
            let mut ids = Vec::new();
            loop {
                let question = match socket.read() {
                    Ok(Message::Text(text)) => text,
                    Ok(_) => continue,
                    Err(_) => return ids,
                };
                let question: serde_json::Value = serde_json::from_str(&question).unwrap();
                let id = question["id"].as_u64().unwrap();
                if question["method"] == COLLECT_GARBAGE {
                    shared.collections.fetch_add(1, Ordering::SeqCst);
                    let done = format!(r#"{{"id":{id},"result":{{}}}}"#);
                    socket.send(Message::text(done)).unwrap();
                    continue;
                }
                assert_eq!(question["method"], GET_HEAP_USAGE);
                let noise = [
                    r#"{"method":"Runtime.consoleAPICalled","params":{}}"#.to_owned(),
                    format!(r#"{{"id":{},"result":{{}}}}"#, id + 100_000),
                ];
                for text in noise {
                    socket.send(Message::text(text)).unwrap();
                }
                let answer = if shared.refuse.load(Ordering::SeqCst) {
                    format!(r#"{{"id":{id},"error":{{"code":-32000,"message":"gone"}}}}"#)
                } else {
                    let used = used[ids.len() % used.len()];
                    format!(
                        r#"{{"id":{id},"result":{{"usedSize":{used},"totalSize":{},"embedderHeapUsedSize":5,"backingStorageSize":1000}}}}"#,
                        used * 2
                    )
                };
                ids.push(id);
                if socket.send(Message::text(answer)).is_err() {
                    return ids;
                }
                shared.answered.fetch_add(1, Ordering::SeqCst);
            }
        });
        (port, thread)
    }

    #[test]
    fn the_peak_is_the_largest_answer_to_its_own_questions() {
        let shared = Arc::new(Shared::default());
        let (port, inspector) = inspector(vec![100, 5_000, 300], Arc::clone(&shared));
        let mut sampler = HeapSampler::new(port);
        let sampling = sampler.start().unwrap();
        assert_eq!(
            shared.collections.load(Ordering::SeqCst),
            1,
            "the garbage collected first"
        );
        while shared.answered.load(Ordering::SeqCst) < 3 {
            std::thread::sleep(Duration::from_millis(1));
        }
        let peak = sampler.finish(sampling).unwrap();
        assert!(peak.samples >= 3, "{peak:?}");
        assert_eq!(peak.used_bytes, 5_000, "{peak:?}");
        assert_eq!(
            peak.isolate_bytes, 6_000,
            "heap in use plus ArrayBuffers: {peak:?}"
        );
        // The connection is kept: the next sampling asks on it (its last question at least),
        // and an error answered is an error, not a peak.
        shared.refuse.store(true, Ordering::SeqCst);
        let sampling = sampler.start().unwrap();
        assert_eq!(shared.collections.load(Ordering::SeqCst), 2);
        let err = sampler.finish(sampling).unwrap_err();
        assert!(
            format!("{err:#}").contains("refused Runtime.getHeapUsage"),
            "{err:#}"
        );
        drop(sampler);
        let ids = inspector.join().unwrap();
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "every question its own id: {ids:?}"
        );
    }

    #[test]
    fn answers_to_other_questions_and_events_are_passed_over() {
        let usage = r#"{"id":7,"result":{"usedSize":1285972,"totalSize":2359296,"embedderHeapUsedSize":515872,"backingStorageSize":518613}}"#;
        let result = answer_to(usage, 7, GET_HEAP_USAGE).unwrap().unwrap();
        assert_eq!(
            serde_json::from_value::<HeapUsage>(result).unwrap(),
            HeapUsage {
                used_size: 1_285_972,
                total_size: 2_359_296,
                backing_storage_size: 518_613
            }
        );
        assert_eq!(answer_to(usage, 8, GET_HEAP_USAGE).unwrap(), None);
        let proxy = r#"{"id":100000018,"result":{}}"#;
        assert_eq!(answer_to(proxy, 7, GET_HEAP_USAGE).unwrap(), None);
        let event = r#"{"method":"Debugger.paused","params":{}}"#;
        assert_eq!(answer_to(event, 7, GET_HEAP_USAGE).unwrap(), None);
        // An older V8 without ArrayBuffers in its answer: the heap alone.
        let old: HeapUsage = serde_json::from_str(r#"{"usedSize":10,"totalSize":20}"#).unwrap();
        assert_eq!(old.isolate_bytes(), 10);
        let refused = r#"{"id":7,"error":{"code":-32601,"message":"'X' wasn't found"}}"#;
        let err = answer_to(refused, 7, COLLECT_GARBAGE).unwrap_err();
        assert!(
            format!("{err:#}").contains("refused HeapProfiler.collectGarbage"),
            "{err:#}"
        );
        assert!(answer_to(r#"{"id":7}"#, 7, GET_HEAP_USAGE).is_err());
        assert!(answer_to("not json", 7, GET_HEAP_USAGE).is_err());
    }
}
