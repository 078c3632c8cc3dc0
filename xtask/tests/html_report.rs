//! The report pages in a real browser: headless Chromium (Debian's `chromium`) opens the committed
//! run `docs/example-run`'s index.html, and the page over runs and compare.html written for copies
//! of it and its replicate, each from the file system with the browser's network log on. Each
//! page's DOM must hold every chart, its findings and links that all resolve to a file, and the
//! log no request the page made (a leaky page, opened the same way, shows the check can fail).
//!
//! Then a run of each kind on in-process SQLite (a smoke column sweep, `limits`, the read-path
//! smoke workload) and one interrupted mid-way: each leaves its index.html, prints its link last,
//! draws every figure inline (the workload a percentile plot per point, the ladder its parity
//! table), and the interrupted one says so.
//!
//! The same checks of links, ids, charts and findings run on the HTML files themselves first, so
//! where Chromium is not installed they still run, and the test says plainly that the browser's
//! did not (with `D1BENCH_REQUIRE_BROWSER=1`, as `.ci/run` sets it, a missing browser fails).

mod support;

use std::collections::HashSet;
use std::io::Write as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long one page may take to open and be dumped (it takes about a second).
const BROWSER_TIMEOUT: Duration = Duration::from_secs(90);

/// The flags this machine's notes give for Chromium on a closed network, plus one that sends
/// every host name nowhere: nothing the browser tries can leave the machine.
const FLAGS: [&str; 13] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--mute-audio",
    "--hide-scrollbars",
    "--host-resolver-rules=MAP * ~NOTFOUND",
];

/// Says `line` where a passing test's output is still seen (the harness captures `eprintln!`).
fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "html_report: {line}");
}

/// The browser: `D1BENCH_CHROMIUM` when set (none when it names no file), else
/// `/usr/bin/chromium`, else `chromium` on the PATH.
fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("D1BENCH_CHROMIUM") {
        return Some(PathBuf::from(path)).filter(|p| p.is_file());
    }
    let default = PathBuf::from("/usr/bin/chromium");
    if default.is_file() {
        return Some(default);
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("chromium"))
            .find(|p| p.is_file())
    })
}

/// The browser when installed; else says so, and fails where it is required.
fn browser_or_say_why_not() -> Option<PathBuf> {
    let found = chromium();
    if found.is_none() {
        let required = std::env::var_os("D1BENCH_REQUIRE_BROWSER").is_some_and(|v| v == "1");
        assert!(
            !required,
            "D1BENCH_REQUIRE_BROWSER=1 and no Chromium at /usr/bin/chromium or on the PATH"
        );
        say(
            "Chromium is not installed (/usr/bin/chromium; `apt-get install chromium \
             chromium-driver`): the BROWSER CHECKS DID NOT RUN, only the checks of the HTML files",
        );
    }
    found
}

/// One tag of a page: its name and attributes (values as written, entities left in).
#[derive(Debug)]
struct Tag {
    name: String,
    attributes: Vec<(String, String)>,
}

impl Tag {
    fn get(&self, name: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The start tags of `html`, read as the pages write them (and Chromium serializes them):
/// attribute values in double quotes, or bare.
fn tags(html: &str) -> Vec<Tag> {
    let mut out = Vec::new();
    let bytes = html.as_bytes();
    let mut i = 0;
    while let Some(at) = html[i..].find('<') {
        i += at + 1;
        let name: String = html[i..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        if name.is_empty() {
            continue;
        }
        i += name.len();
        let mut attributes = Vec::new();
        loop {
            while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                i += 1;
            }
            if i >= bytes.len() || bytes[i] == b'>' || bytes[i] == b'/' {
                break;
            }
            let attr: String = html[i..]
                .chars()
                .take_while(|c| !c.is_ascii_whitespace() && *c != '=' && *c != '>' && *c != '/')
                .collect();
            i += attr.len().max(1);
            let mut value = String::new();
            if i < bytes.len() && bytes[i] == b'=' {
                i += 1;
                if bytes[i] == b'"' {
                    let end = html[i + 1..].find('"').expect("a closing quote");
                    value = html[i + 1..i + 1 + end].to_owned();
                    i += end + 2;
                } else {
                    value = html[i..]
                        .chars()
                        .take_while(|c| !c.is_ascii_whitespace() && *c != '>')
                        .collect();
                    i += value.len();
                }
            }
            attributes.push((attr.to_ascii_lowercase(), value));
        }
        out.push(Tag {
            name: name.to_ascii_lowercase(),
            attributes,
        });
    }
    out
}

/// `&amp;` and the like back to text, for link targets.
fn unescape(value: &str) -> String {
    value
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// Checks every page shares, on its file and on the browser's DOM of it alike: no element that
/// loads anything, no `src`, every link either to an id on the page or to a file beside it (no
/// scheme, no host), ids unique. Returns how many inline `<svg>` the page has.
fn check_page(html: &str, dir: &Path, what: &str) -> usize {
    let tags = tags(html);
    for loader in [
        "script", "link", "img", "iframe", "object", "embed", "audio", "video", "source", "base",
        "picture", "frame",
    ] {
        assert!(
            !tags.iter().any(|t| t.name == loader),
            "{what}: a <{loader}> element, which may load something"
        );
    }
    for t in &tags {
        assert!(t.get("src").is_none(), "{what}: a src attribute: {t:?}");
        assert!(
            t.get("http-equiv") != Some("refresh"),
            "{what}: a refresh: {t:?}"
        );
        assert!(
            t.attributes.iter().all(|(n, _)| !n.starts_with("on")),
            "{what}: an event handler: {t:?}"
        );
    }
    let lower = html.to_ascii_lowercase();
    assert!(
        !lower.contains("@import") && !lower.contains("url("),
        "{what}: a style that may fetch"
    );
    let mut ids = HashSet::new();
    for id in tags.iter().filter_map(|t| t.get("id")) {
        assert!(ids.insert(id.to_owned()), "{what}: id {id} twice");
    }
    let mut links = 0;
    for href in tags
        .iter()
        .filter(|t| t.name == "a")
        .filter_map(|t| t.get("href"))
    {
        let href = unescape(href);
        links += 1;
        if let Some(id) = href.strip_prefix('#') {
            assert!(ids.contains(id), "{what}: a link to #{id}, no such id");
            continue;
        }
        assert!(
            !href.contains(':') && !href.starts_with("//") && !href.starts_with('/'),
            "{what}: a link that leaves the directory's files: {href}"
        );
        let file = dir.join(&href);
        assert!(
            file.is_file(),
            "{what}: a link to {href}, and no file {}",
            file.display()
        );
    }
    assert!(links > 0, "{what}: no link at all");
    tags.iter().filter(|t| t.name == "svg").count()
}

/// The text of the element with `id` up to the next `</section>`.
fn section<'a>(html: &'a str, id: &str) -> &'a str {
    let start = html
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id}"));
    let end = html[start..]
        .find("</section>")
        .map_or(html.len(), |e| start + e);
    &html[start..end]
}

/// Checks that each chart SVG of `dir` is drawn inline in its figure on the page; returns how
/// many there are.
fn check_figures(html: &str, dir: &Path, what: &str) -> usize {
    let mut charts = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "svg") {
            continue;
        }
        charts += 1;
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let figure = html
            .find(&format!("id=\"chart-{stem}\""))
            .unwrap_or_else(|| panic!("{what}: no figure for the chart {stem}"));
        let end = figure + html[figure..].find("</figure>").unwrap();
        assert!(
            html[figure..end].contains("<svg"),
            "{what}: the chart {stem} is not drawn inline"
        );
    }
    charts
}

/// Checks a run page's content: each chart SVG of `dir` inline in its figure, and the findings
/// of its summary.csv (literal ÷ bound at the widest point, as the README quotes it) in its
/// findings section.
fn check_run_page(html: &str, dir: &Path, what: &str) {
    let charts = check_figures(html, dir, what);
    assert!(charts >= 3, "{what}: {charts} charts in {}", dir.display());
    let target = support::run_toml(dir)["run"]["target"]
        .as_str()
        .unwrap()
        .to_owned();
    let ratios: Vec<support::Row> = support::read_csv(&dir.join("summary.csv"))
        .into_iter()
        .filter(|r| {
            r["measure"] == "ratio_to_bound" && r["target"] == target && r["label"].is_empty()
        })
        .collect();
    let widest = ratios
        .iter()
        .max_by_key(|r| support::num(r, "columns"))
        .expect("literal ÷ bound in summary.csv");
    let f = |key: &str| widest[key].parse::<f64>().unwrap();
    let expected = format!(
        "literal ÷ bound = {:.2} ({:.2}–{:.2})",
        f("median"),
        f("ci_low"),
        f("ci_high")
    );
    let findings = section(html, "findings");
    assert!(
        findings.contains(&expected),
        "{what}: the findings do not say {expected}:\n{findings}"
    );
    assert!(findings.contains("literal is faster"), "{what}: {findings}");
    // One row per point of the fastest-strategy table (its rows open with the point's x; the
    // table of what the run could detect above it opens its rows with the comparison).
    let points: HashSet<&str> = ratios.iter().map(|r| r["columns"].as_str()).collect();
    assert_eq!(
        findings.matches("<tr><td class=\"num\">").count(),
        points.len(),
        "{what}: {findings}"
    );
    assert!(findings.contains("What this run could detect."), "{what}");
    assert!(
        section(html, "sessions").contains("<circle"),
        "{what}: no session dots"
    );
    assert!(
        section(html, "provenance").contains("load average"),
        "{what}"
    );
}

/// Kills the browser's whole process group however the test leaves (a panic included).
struct Browser(Child);

impl Drop for Browser {
    fn drop(&mut self) {
        let group = self.0.id() as i32;
        // SAFETY: a signal to the process group this test created for the browser.
        unsafe {
            libc::kill(-group, libc::SIGKILL);
        }
        let _ = self.0.wait();
    }
}

/// What the browser made of a page: its DOM, and the URLs the page itself asked for.
struct Opened {
    dom: String,
    requests: Vec<String>,
}

/// Opens `page` in headless Chromium with a fresh profile and the network logged; the DOM it
/// dumps, and every request in the log that a page started (the browser's own carry no origin).
fn open(browser: &Path, page: &Path) -> Opened {
    let scratch = tempfile::tempdir().unwrap();
    let page = std::path::absolute(page).unwrap();
    let shown = page.display().to_string();
    assert!(
        shown
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/-_.+".contains(c)),
        "{shown}: a path this test would have to escape in a file URL"
    );
    let (dom, log) = (
        scratch.path().join("dom.html"),
        scratch.path().join("net.json"),
    );
    let started = Instant::now();
    let mut child = Browser(
        Command::new(browser)
            .args(FLAGS)
            .arg(format!(
                "--user-data-dir={}",
                scratch.path().join("profile").display()
            ))
            .arg(format!("--log-net-log={}", log.display()))
            .arg("--dump-dom")
            .arg(format!("file://{shown}"))
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&dom).unwrap())
            .stderr(std::fs::File::create(scratch.path().join("stderr")).unwrap())
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", browser.display())),
    );
    let status = loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < BROWSER_TIMEOUT,
            "{} did not render {shown} within {BROWSER_TIMEOUT:?}",
            browser.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    drop(child);
    let stderr = std::fs::read_to_string(scratch.path().join("stderr")).unwrap_or_default();
    assert!(
        status.success(),
        "{} failed on {shown}: {status}\n{stderr}",
        browser.display()
    );
    let dom = std::fs::read_to_string(&dom).unwrap();
    assert!(dom.contains("</html>"), "no DOM for {shown}:\n{stderr}");
    say(&format!(
        "Chromium rendered {shown} in {:.1} s",
        started.elapsed().as_secs_f64()
    ));
    Opened {
        dom,
        requests: page_requests(&log),
    }
}

/// The URLs of the requests in a Chromium net log that a page started: those whose initiator is
/// an origin (a `file:` page's is `null`); the browser's own say `not an origin`.
fn page_requests(log: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(log).unwrap();
    // Chromium may end the log without closing it when killed: it exits on its own here.
    let log: serde_json::Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("the net log {} does not parse: {e}", log.display()));
    let start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
        .as_u64()
        .expect("the net log names URL_REQUEST_START_JOB");
    log["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"].as_u64() == Some(start_job))
        .filter_map(|e| {
            let params = &e["params"];
            let url = params["url"].as_str()?;
            (params["initiator"].as_str() != Some("not an origin")).then(|| url.to_owned())
        })
        .collect()
}

/// Opens `page` and checks what the browser made of it as its file was checked: the same inline
/// SVGs, links and ids, and no request.
fn check_in_browser(browser: &Path, page: &Path, svgs: usize) -> String {
    let opened = open(browser, page);
    let what = format!("{} in Chromium", page.display());
    assert!(
        opened.requests.is_empty(),
        "{what}: the page asked for {:?}",
        opened.requests
    );
    assert_eq!(
        check_page(&opened.dom, page.parent().unwrap(), &what),
        svgs,
        "{what}: not every inline SVG became an svg element"
    );
    opened.dom
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            std::fs::copy(&path, to.join(path.file_name().unwrap())).unwrap();
        }
    }
}

#[test]
fn the_committed_example_runs_page_shows_its_charts_and_findings_and_fetches_nothing() {
    let dir = support::project_root().join("docs/example-run");
    let page = dir.join("index.html");
    let html = std::fs::read_to_string(&page)
        .unwrap_or_else(|e| panic!("{}: {e} (cargo xtask report writes it)", page.display()));
    let svgs = check_page(&html, &dir, "docs/example-run/index.html");
    check_run_page(&html, &dir, "docs/example-run/index.html");
    let Some(browser) = browser_or_say_why_not() else {
        return;
    };
    let dom = check_in_browser(&browser, &page, svgs);
    check_run_page(&dom, &dir, "docs/example-run/index.html in Chromium");
}

#[test]
fn the_page_over_runs_and_compare_html_resolve_every_link_and_fetch_nothing() {
    let root = support::project_root();
    let scratch = tempfile::tempdir().unwrap();
    let (a, b) = (scratch.path().join("a"), scratch.path().join("b"));
    copy_dir(&root.join("docs/example-run"), &a);
    copy_dir(&root.join("docs/runs/column-sweep-replicate"), &b);
    let all = scratch.path().join("all");
    let output = support::xtask(&["report"])
        .args([&a, &b])
        .arg("--out")
        .arg(&all)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", support::text(&output));
    let compared = scratch.path().join("compared");
    let output = support::xtask(&["compare", "--no-calibration", "--out"])
        .arg(&compared)
        .args([&a, &b])
        .output()
        .unwrap();
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "{}",
        support::text(&output)
    );
    let runs_page = all.join("index.html");
    let compare_page = compared.join("compare.html");
    let mut pages = Vec::new();
    for page in [&runs_page, &compare_page, &a.join("index.html")] {
        let html = std::fs::read_to_string(page).unwrap();
        let svgs = check_page(&html, page.parent().unwrap(), &page.display().to_string());
        pages.push((page.clone(), html, svgs));
    }
    // The page over runs links each run's page; compare.html has a row and a strip per point.
    let runs_html = &pages[0].1;
    for run in [&a, &b] {
        let href = format!(
            "../{}/index.html",
            run.file_name().unwrap().to_string_lossy()
        );
        assert!(
            runs_html.contains(&format!("href=\"{href}\"")),
            "{runs_html}"
        );
    }
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(compared.join("compare.json")).unwrap()).unwrap();
    let points = json["points"].as_array().unwrap().len();
    let compare_html = &pages[1].1;
    assert_eq!(pages[1].2, points, "one strip per point");
    assert!(compare_html.contains("id=\"glance\""), "{compare_html}");
    assert_eq!(
        compare_html.matches("<tr class=\"").count(),
        points,
        "{compare_html}"
    );
    let Some(browser) = browser_or_say_why_not() else {
        return;
    };
    for (page, _, svgs) in &pages {
        check_in_browser(&browser, page, *svgs);
    }
    // The check can fail: a page that loads an image and a stylesheet from elsewhere is caught.
    let leaky = scratch.path().join("leaky.html");
    std::fs::write(
        &leaky,
        "<!DOCTYPE html><html><body><img src=\"http://example.invalid/x.png\">\
         <link rel=\"stylesheet\" href=\"https://example.invalid/a.css\"></body></html>",
    )
    .unwrap();
    let opened = open(&browser, &leaky);
    assert_eq!(
        opened.requests,
        [
            "http://example.invalid/x.png",
            "https://example.invalid/a.css"
        ],
        "the net log check misses a page's own requests"
    );
}

/// `cargo xtask run ARGS --out OUT`, which must succeed: its run directory and its stdout's last
/// line.
fn run(args: &[&str], out: &Path) -> (PathBuf, String) {
    let output = support::xtask(&["run"])
        .args(args)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{args:?}: {}",
        support::text(&output)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let last = stdout.lines().last().unwrap_or_default().to_owned();
    (support::run_dir(out), last)
}

/// `file://` and the absolute path of `dir`'s index.html, as a run prints it last.
fn link_of(dir: &Path) -> String {
    format!(
        "file://{}",
        std::path::absolute(dir.join("index.html"))
            .unwrap()
            .display()
    )
}

/// The (target, point) pairs of a workload run's measured requests that succeeded.
fn measured_points(dir: &Path) -> HashSet<(String, String)> {
    support::read_csv(&dir.join("results.csv"))
        .into_iter()
        .filter(|r| r["phase"] == "measure" && r["outcome"] == "ok")
        .map(|r| (r["target"].clone(), r["point"].clone()))
        .collect()
}

#[test]
fn a_run_of_every_kind_leaves_its_page_and_prints_its_link_last() {
    let scratch = tempfile::tempdir().unwrap();
    let mut pages = Vec::new();

    let (sweep, last) = run(
        &["column-sweep", "--target", "sqlite", "--profile", "smoke"],
        &scratch.path().join("sweep"),
    );
    assert_eq!(last, link_of(&sweep), "the sweep's last line");
    let html = std::fs::read_to_string(sweep.join("index.html")).unwrap();
    let svgs = check_page(&html, &sweep, "the sweep's page");
    assert!(check_figures(&html, &sweep, "the sweep's page") >= 2);
    assert!(section(&html, "findings").contains("Fastest strategy"));
    pages.push((sweep.join("index.html"), svgs));

    let (ladder, last) = run(
        &["limits", "--target", "sqlite"],
        &scratch.path().join("ladder"),
    );
    assert_eq!(last, link_of(&ladder), "the ladder's last line");
    let html = std::fs::read_to_string(ladder.join("index.html")).unwrap();
    let svgs = check_page(&html, &ladder, "the ladder's page");
    check_figures(&html, &ladder, "the ladder's page");
    let parity = section(&html, "parity");
    let limits = support::read_csv(&ladder.join("parity.csv"));
    assert!(!limits.is_empty(), "no limit in parity.csv");
    assert!(parity.contains("found on sqlite"), "{parity}");
    assert_eq!(
        parity.matches("<tr><td>").count(),
        limits.len(),
        "one row per limit: {parity}"
    );
    assert!(
        section(&html, "rungs").contains("refused"),
        "no refused rung"
    );
    // The chart files the terminal no longer lists are in summary.md.
    let summary = std::fs::read_to_string(ladder.join("summary.md")).unwrap();
    assert!(
        summary.contains("## Charts") && summary.contains("(param-ceiling.png)"),
        "{summary}"
    );
    pages.push((ladder.join("index.html"), svgs));

    let (workload, last) = run(
        &["read-path", "--target", "sqlite", "--profile", "smoke"],
        &scratch.path().join("workload"),
    );
    assert_eq!(last, link_of(&workload), "the workload's last line");
    let html = std::fs::read_to_string(workload.join("index.html")).unwrap();
    let svgs = check_page(&html, &workload, "the workload's page");
    check_figures(&html, &workload, "the workload's page");
    let points = measured_points(&workload);
    assert!(!points.is_empty());
    for (target, point) in &points {
        let id = format!("id=\"chart-latency-percentiles-{target}-point-{point}\"");
        assert!(html.contains(&id), "no percentile plot for point {point}");
    }
    let verdicts = html.find("id=\"verdicts\"").unwrap();
    assert!(
        verdicts < html.find("id=\"points\"").unwrap(),
        "the verdicts come first"
    );
    assert!(section(&html, "verdicts").contains("covering ÷ key index"));
    pages.push((workload.join("index.html"), svgs));

    // The page over runs lists all three, each with what it found.
    let all = scratch.path().join("all");
    let output = support::xtask(&["report"])
        .args([&sweep, &ladder, &workload])
        .arg("--out")
        .arg(&all)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", support::text(&output));
    let over = std::fs::read_to_string(all.join("index.html")).unwrap();
    check_page(&over, &all, "the page over runs");
    for found in ["fastest by columns", "limits enforced", "comparisons: "] {
        assert!(over.contains(found), "{found}: {over}");
    }

    let Some(browser) = browser_or_say_why_not() else {
        return;
    };
    for (page, svgs) in &pages {
        check_in_browser(&browser, page, *svgs);
    }
}

#[test]
fn a_run_interrupted_mid_way_leaves_a_page_that_says_so() {
    let out = tempfile::tempdir().unwrap();
    let mut xtask = support::xtask(&["run", "read-path", "--target", "sqlite", "--profile"])
        .arg("smoke")
        .arg("--out")
        .arg(out.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(300);
    let dir = loop {
        assert!(
            Instant::now() < deadline,
            "no request measured in 5 minutes"
        );
        assert!(
            xtask.try_wait().unwrap().is_none(),
            "the run ended before it was interrupted"
        );
        let dir = std::fs::read_dir(out.path())
            .ok()
            .and_then(|mut d| d.next())
            .map(|e| e.unwrap().path());
        if let Some(dir) = dir.filter(|d| {
            std::fs::read_to_string(d.join("results.csv"))
                .is_ok_and(|t| t.lines().filter(|l| l.contains(",measure,")).count() >= 20)
        }) {
            break dir;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // SAFETY: kill(2) on our own child's pid: what Ctrl-C delivers.
    unsafe { libc::kill(xtask.id() as i32, libc::SIGINT) };
    let output = xtask.wait_with_output().unwrap();
    assert!(!output.status.success(), "the interrupted run succeeded");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        stdout.lines().last().unwrap_or_default(),
        link_of(&dir),
        "{stdout}"
    );
    assert_eq!(
        support::run_toml(&dir)["run"]["status"].as_str(),
        Some("interrupted")
    );
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    let svgs = check_page(&html, &dir, "the interrupted run's page");
    assert!(html.contains("Status: interrupted."), "{html}");
    assert!(html.contains("was stopped (Ctrl-C"), "{html}");
    // What it measured before: a plot and a table for each point it reached.
    for (target, point) in measured_points(&dir) {
        let id = format!("id=\"chart-latency-percentiles-{target}-point-{point}\"");
        assert!(html.contains(&id), "no percentile plot for point {point}");
    }
    if let Some(browser) = browser_or_say_why_not() {
        check_in_browser(&browser, &dir.join("index.html"), svgs);
    }
}
