//! Every wrangler command a remote run makes, as data ([`Step`]), and the one runner that
//! executes them ([`Wrangler`]): calls are paced, retried with backoff (and a printed note) while
//! the Cloudflare API rate-limits, each call's output goes to a transcript, and a secret only
//! ever travels on standard input.

use std::ffi::OsString;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use super::answers::tail;
use crate::base::Location;
use crate::procs::{self, ProcessGroup};

/// Replaces `node wrangler.js` with this executable (the tests' stand-in wrangler).
pub const OVERRIDE_VAR: &str = "D1BENCH_WRANGLER";

/// A value that must never reach a log, an error message or a command line.
#[derive(Clone)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: String) -> Self {
        Secret(value)
    }
    /// The value itself, for the one place that needs it (stdin, an Authorization header).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

/// The Cloudflare account a remote run uses, from the environment.
#[derive(Debug, Clone)]
pub struct Credentials {
    pub api_token: Secret,
    pub account_id: String,
}

impl Credentials {
    pub const TOKEN_VAR: &str = "CLOUDFLARE_API_TOKEN";
    pub const ACCOUNT_VAR: &str = "CLOUDFLARE_ACCOUNT_ID";

    pub fn from_env() -> Result<Self> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads both variables through `lookup`; an empty value counts as missing.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let get = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let token = get(Self::TOKEN_VAR);
        let account = get(Self::ACCOUNT_VAR);
        let missing: Vec<&str> = [
            (Self::TOKEN_VAR, token.is_none()),
            (Self::ACCOUNT_VAR, account.is_none()),
        ]
        .into_iter()
        .filter_map(|(name, absent)| absent.then_some(name))
        .collect();
        match (token, account) {
            (Some(token), Some(account_id)) => Ok(Credentials {
                api_token: Secret::new(token),
                account_id,
            }),
            _ => bail!(
                "{} is not set: a remote run needs {} (an API token with the permissions \
                 Workers Scripts: Edit, D1: Edit and Account Settings: Read) and {} (the \
                 account's id) in the environment; see docs/cloudflare.md",
                missing.join(" and "),
                Self::TOKEN_VAR,
                Self::ACCOUNT_VAR
            ),
        }
    }
}

/// A wrangler command of a remote run, with everything its arguments are made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// `wrangler d1 create <name> [--location <hint>]`
    CreateDatabase {
        name: String,
        location: Option<Location>,
    },
    /// `wrangler d1 list --json`
    ListDatabases,
    /// `wrangler kv namespace create <name>`
    CreateKvNamespace { name: String },
    /// `wrangler kv namespace list`
    ListKvNamespaces,
    /// `wrangler kv namespace delete <name> --skip-confirmation`
    DeleteKvNamespace { name: String },
    /// `wrangler deploy --config <config>`
    Deploy { config: PathBuf },
    /// `wrangler secret put <key> --name <worker> --config <config>`, the value on stdin.
    PutSecret {
        key: String,
        worker: String,
        config: PathBuf,
    },
    /// `wrangler delete --name <worker> --force`
    DeleteWorker { name: String },
    /// `wrangler d1 delete <name> --skip-confirmation`
    DeleteDatabase { name: String },
}

impl Step {
    /// The arguments after `wrangler`.
    pub fn args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = Vec::new();
        let mut push = |a: &dyn AsRef<std::ffi::OsStr>| args.push(a.as_ref().to_owned());
        match self {
            Step::CreateDatabase { name, location } => {
                for a in ["d1", "create", name] {
                    push(&a);
                }
                if let Some(location) = location {
                    push(&"--location");
                    push(&location.name());
                }
            }
            Step::ListDatabases => {
                for a in ["d1", "list", "--json"] {
                    push(&a);
                }
            }
            Step::CreateKvNamespace { name } => {
                for a in ["kv", "namespace", "create", name] {
                    push(&a);
                }
            }
            Step::ListKvNamespaces => {
                for a in ["kv", "namespace", "list"] {
                    push(&a);
                }
            }
            Step::DeleteKvNamespace { name } => {
                for a in ["kv", "namespace", "delete", name, "--skip-confirmation"] {
                    push(&a);
                }
            }
            Step::Deploy { config } => {
                push(&"deploy");
                push(&"--config");
                push(config);
            }
            Step::PutSecret {
                key,
                worker,
                config,
            } => {
                for a in ["secret", "put", key, "--name", worker, "--config"] {
                    push(&a);
                }
                push(config);
            }
            Step::DeleteWorker { name } => {
                for a in ["delete", "--name", name, "--force"] {
                    push(&a);
                }
            }
            Step::DeleteDatabase { name } => {
                for a in ["d1", "delete", name, "--skip-confirmation"] {
                    push(&a);
                }
            }
        }
        args
    }

    /// `wrangler <args>`, for messages and the transcript.
    pub fn label(&self) -> String {
        let args: Vec<String> = self
            .args()
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        format!("wrangler {}", args.join(" "))
    }

    /// Whether the step deletes something. A deletion runs shielded from the interrupt handler
    /// (it is what an interrupt must still get done), and "not found" means it is already done.
    pub fn is_teardown(&self) -> bool {
        matches!(
            self,
            Step::DeleteWorker { .. }
                | Step::DeleteDatabase { .. }
                | Step::DeleteKvNamespace { .. }
        )
    }

    /// Longest one attempt may take before it is stopped.
    fn timeout(&self) -> Duration {
        match self {
            Step::Deploy { .. } => Duration::from_secs(600),
            _ => Duration::from_secs(180),
        }
    }
}

/// How calls to the Cloudflare API are spaced and retried.
#[derive(Debug, Clone, Copy)]
pub struct Pacing {
    /// Least time between the starts of two calls.
    pub min_interval: Duration,
    /// Wait before the second attempt of a rate-limited call; it doubles after each attempt.
    pub first_backoff: Duration,
    /// Attempts of a rate-limited call before giving up.
    pub attempts: u32,
}

impl Pacing {
    /// For the real API: its global limit is 1,200 requests per 5 minutes per user, and
    /// wrangler already retries a 429 a few times within seconds; these waits add up to 155 s.
    pub const CLOUDFLARE: Pacing = Pacing {
        min_interval: Duration::from_secs(1),
        first_backoff: Duration::from_secs(5),
        attempts: 6,
    };
}

/// How a remote run starts wrangler.
#[derive(Debug, Clone)]
pub enum Launcher {
    /// The pinned wrangler under worker/node_modules, on the Node.js 22 it needs.
    Node { node: PathBuf, wrangler_js: PathBuf },
    /// An executable given in [`OVERRIDE_VAR`].
    Executable(PathBuf),
}

impl Launcher {
    /// The executable in [`OVERRIDE_VAR`], if set.
    pub fn from_override() -> Option<Launcher> {
        std::env::var_os(OVERRIDE_VAR)
            .filter(|v| !v.is_empty())
            .map(|v| Launcher::Executable(PathBuf::from(v)))
    }
}

/// What a successful call printed.
#[derive(Debug, Clone, Default)]
pub struct Answer {
    pub stdout: String,
    pub stderr: String,
}

impl Answer {
    /// Both streams, for parsers that do not care where wrangler printed a line.
    pub fn text(&self) -> String {
        format!("{}\n{}", self.stdout, self.stderr)
    }
}

/// Why a call failed, as far as retrying is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Failure {
    /// The API refused the request for its rate: nothing happened, try again later.
    RateLimited,
    /// The thing to delete does not exist.
    Gone,
    Other,
}

/// Classifies a failed call by what wrangler printed.
fn classify(text: &str) -> Failure {
    let lower = text.to_lowercase();
    // Phrases of a refusal for rate, never a bare "429" (a size or an id may contain it).
    let rate_limited = [
        "too many requests",
        "status 429",
        "http 429",
        "(429)",
        "rate limit",
        "rate-limit",
        "ratelimit",
        "throttl",
        "[code: 971]",
    ];
    // wrangler's own words for a missing database or KV namespace, and the API's codes for a missing Worker;
    // nothing vaguer, so a wrong account or a missing program is never taken for "deleted".
    let gone = [
        "couldn't find db",
        "no kv namespace named",
        "does not exist on your account",
        "[code: 10007]",
        "[code: 10090]",
        "[code: 7404]",
    ];
    if rate_limited.iter().any(|p| lower.contains(p)) {
        Failure::RateLimited
    } else if gone.iter().any(|p| lower.contains(p)) {
        Failure::Gone
    } else {
        Failure::Other
    }
}

/// Runs wrangler steps for one directory of state: paced, retried, transcribed.
pub struct Wrangler {
    launcher: Launcher,
    env: Vec<(OsString, OsString)>,
    dir: PathBuf,
    pacing: Pacing,
    last_call: Mutex<Option<Instant>>,
    calls: AtomicU64,
    say: Arc<dyn Fn(&str) + Send + Sync>,
}

/// Variables that would point wrangler at another account or credential than the run's.
const OTHER_CREDENTIALS: &[&str] = &["CLOUDFLARE_API_KEY", "CLOUDFLARE_EMAIL", "CF_API_TOKEN"];

impl Wrangler {
    /// A runner keeping its state, logs and transcript under `dir`; `say` prints progress.
    pub fn new(
        launcher: Launcher,
        dir: &Path,
        credentials: &Credentials,
        pacing: Pacing,
        say: Arc<dyn Fn(&str) + Send + Sync>,
    ) -> Result<Self> {
        for sub in ["config", "logs", "calls"] {
            let path = dir.join(sub);
            std::fs::create_dir_all(&path)
                .with_context(|| format!("cannot create {}", path.display()))?;
        }
        let mut env: Vec<(OsString, OsString)> = vec![
            (
                Credentials::TOKEN_VAR.into(),
                credentials.api_token.expose().into(),
            ),
            (
                Credentials::ACCOUNT_VAR.into(),
                credentials.account_id.clone().into(),
            ),
            ("XDG_CONFIG_HOME".into(), dir.join("config").into()),
            ("WRANGLER_LOG_PATH".into(), dir.join("logs").into()),
            ("WRANGLER_SEND_METRICS".into(), "false".into()),
            // wrangler's own debug log leaves request bodies (a secret's value) out only while
            // this is on; it is the default, and set here so no environment can turn it off.
            ("WRANGLER_LOG_SANITIZE".into(), "true".into()),
            ("NO_COLOR".into(), "1".into()),
            ("FORCE_COLOR".into(), "0".into()),
        ];
        if let Launcher::Node { node, .. } = &launcher
            && let Some(bin) = node.parent()
        {
            env.push(("PATH".into(), prepend_path(bin)));
        }
        Ok(Wrangler {
            launcher,
            env,
            dir: dir.to_owned(),
            pacing,
            last_call: Mutex::new(None),
            calls: AtomicU64::new(0),
            say,
        })
    }

    /// Adds a variable to wrangler's environment (how the tests configure their stand-in).
    #[cfg(test)]
    pub fn with_env(mut self, key: &str, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Every call's command line and output, in order.
    pub fn transcript(&self) -> PathBuf {
        self.dir.join("wrangler.log")
    }

    /// The directory wrangler runs in and keeps its state under.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn say(&self, message: &str) {
        (self.say)(message)
    }

    /// Runs `step`; an error names the command and ends with what wrangler printed.
    pub fn run(&self, step: &Step) -> Result<Answer> {
        self.call(step, None)
    }

    /// Runs `step` with `secret` on its standard input (and nowhere else).
    pub fn run_with_secret(&self, step: &Step, secret: &Secret) -> Result<Answer> {
        self.call(step, Some(secret))
    }

    fn call(&self, step: &Step, stdin: Option<&Secret>) -> Result<Answer> {
        let label = step.label();
        let attempts = self.pacing.attempts.max(1);
        let mut backoff = self.pacing.first_backoff;
        for attempt in 1..=attempts {
            self.pace(&label);
            if !step.is_teardown() && procs::interrupted() {
                bail!("interrupted before `{label}`");
            }
            let (status, answer) = self.attempt(step, stdin)?;
            if status.success() {
                return Ok(answer);
            }
            let failure = classify(&answer.text());
            if failure == Failure::Gone && step.is_teardown() {
                self.say(&format!("`{label}`: already gone"));
                return Ok(answer);
            }
            if failure == Failure::RateLimited && attempt < attempts {
                self.say(&format!(
                    "the Cloudflare API is rate-limiting `{label}`: waiting {:.1} s before attempt {} of {attempts}",
                    backoff.as_secs_f64(),
                    attempt + 1
                ));
                if !self.sleep(backoff, step) {
                    bail!("interrupted while waiting to retry `{label}`");
                }
                backoff *= 2;
                continue;
            }
            let why = match failure {
                Failure::RateLimited => format!(", still rate-limited after {attempts} attempts"),
                _ => String::new(),
            };
            bail!(
                "`{label}` failed ({status}){why}; wrangler printed:\n{}",
                tail(&answer.text(), 25)
            );
        }
        unreachable!("the last attempt returns or fails")
    }

    /// Waits until `min_interval` has passed since the last call started, saying so.
    fn pace(&self, label: &str) {
        let wait = {
            let mut last = self.last_call.lock().unwrap_or_else(|e| e.into_inner());
            let now = Instant::now();
            let wait = last
                .map(|t| self.pacing.min_interval.saturating_sub(now - t))
                .unwrap_or_default();
            *last = Some(now + wait);
            wait
        };
        if !wait.is_zero() {
            self.say(&format!(
                "pacing Cloudflare API calls: waiting {:.1} s before `{label}`",
                wait.as_secs_f64()
            ));
            std::thread::sleep(wait);
        }
    }

    /// Sleeps `duration`; a setup step's sleep ends early (returning false) on an interrupt.
    fn sleep(&self, duration: Duration, step: &Step) -> bool {
        let end = Instant::now() + duration;
        while Instant::now() < end {
            if !step.is_teardown() && procs::interrupted() {
                return false;
            }
            std::thread::sleep((end - Instant::now()).min(Duration::from_millis(100)));
        }
        true
    }

    /// One attempt: start wrangler, feed the secret, wait, collect and transcribe the output.
    fn attempt(
        &self,
        step: &Step,
        stdin: Option<&Secret>,
    ) -> Result<(std::process::ExitStatus, Answer)> {
        let label = step.label();
        let number = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        let out_path = self.dir.join("calls").join(format!("{number}.out"));
        let err_path = self.dir.join("calls").join(format!("{number}.err"));
        let create = |p: &Path| {
            std::fs::File::create(p).with_context(|| format!("cannot create {}", p.display()))
        };
        let mut command = match &self.launcher {
            Launcher::Node { node, wrangler_js } => {
                let mut c = Command::new(node);
                c.arg(wrangler_js);
                c
            }
            Launcher::Executable(path) => Command::new(path),
        };
        command
            .args(step.args())
            .current_dir(&self.dir)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(create(&out_path)?)
            .stderr(create(&err_path)?);
        for var in OTHER_CREDENTIALS {
            command.env_remove(var);
        }
        for (key, value) in &self.env {
            command.env(key, value);
        }
        let mut process = if step.is_teardown() {
            ProcessGroup::spawn_shielded(command, &label)?
        } else {
            ProcessGroup::spawn(command, &label)?
        };
        if let Some(secret) = stdin {
            let mut pipe = process
                .take_stdin()
                .context("wrangler's stdin is not a pipe")?;
            pipe.write_all(secret.expose().as_bytes())
                .with_context(|| format!("cannot write the secret to `{label}`"))?;
            // Dropping the pipe closes it: wrangler reads to the end.
        }
        let started = Instant::now();
        let status = loop {
            if let Some(status) = process.try_wait()? {
                break status;
            }
            if started.elapsed() > step.timeout() {
                process.stop();
                bail!("`{label}` did not finish within {:?}", step.timeout());
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        process.stop();
        let read = |p: &Path| {
            std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))
        };
        let answer = Answer {
            stdout: read(&out_path)?,
            stderr: read(&err_path)?,
        };
        let _ = std::fs::remove_file(&out_path);
        let _ = std::fs::remove_file(&err_path);
        self.transcribe(&label, stdin.is_some(), status, &answer)?;
        Ok((status, answer))
    }

    fn transcribe(
        &self,
        label: &str,
        had_stdin: bool,
        status: std::process::ExitStatus,
        answer: &Answer,
    ) -> Result<()> {
        let path = self.transcript();
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        let stdin_note = if had_stdin {
            " (a secret on stdin)"
        } else {
            ""
        };
        writeln!(
            file,
            "$ {label}{stdin_note}\n{}\n{}\n[{status}]\n",
            answer.stdout.trim_end(),
            answer.stderr.trim_end()
        )
        .with_context(|| format!("cannot write {}", path.display()))
    }
}

fn prepend_path(dir: &Path) -> OsString {
    let mut parts = vec![dir.to_owned()];
    if let Some(path) = std::env::var_os("PATH") {
        parts.extend(std::env::split_paths(&path));
    }
    std::env::join_paths(parts).expect("PATH entries hold no separator")
}

#[cfg(test)]
mod tests;
