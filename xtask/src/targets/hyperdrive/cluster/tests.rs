//! A real cluster started and stopped, and the Postgres planner's statements and checksum run on
//! it through `psql`: what the Worker sends, held against the host's checksum of the rows.

use std::io::Write;
use std::str::FromStr;

use d1bench_core::{Checksum, Corruption, ProbeRequest, RowGenerator, Strategy, TextMix, Value};
use d1bench_core_pg::sql;

use super::*;

fn probe(probe_id: u64, strategy: Strategy) -> ProbeRequest {
    ProbeRequest {
        probe_id,
        strategy,
        columns: 5,
        rows: 30,
        row_bytes: 200,
        seed: 3,
        rows_per_statement: None,
        json_payload_bytes: None,
        // Quotes, backslashes, line ends and multi-byte text; no NUL, which Postgres text
        // cannot hold.
        text: TextMix {
            escape_share: 0.5,
            nul_share: 0.0,
            non_ascii_share: 0.5,
        },
        indexes: 1,
        debug_corrupt: None,
        debug_slow_percent: None,
    }
}

/// The SQL text of `value` inside `EXECUTE p(...)`.
fn literal(value: &Value) -> String {
    let mut out = String::new();
    sql::push_literal(&mut out, value);
    out
}

/// What the Worker runs for `probe`, as one psql script: the setup, the INSERTs (a bound
/// statement prepared and executed with its values as literals, so its `$n` are Postgres's to
/// number), the corruption if any, then the checksum.
fn script(probe: &ProbeRequest) -> String {
    let plan = sql::plan(probe);
    let mut out = String::new();
    for statement in &plan.setup {
        out.push_str(statement);
        out.push_str(";\n");
    }
    match probe.strategy {
        Strategy::Literal | Strategy::Exec => {
            out.push_str(&sql::exec_script(&plan.inserts));
            out.push_str(";\n");
        }
        _ => {
            for (k, statement) in plan.inserts.iter().enumerate() {
                let values: Vec<String> = statement.params.iter().map(literal).collect();
                out.push_str(&format!(
                    "PREPARE p{k} AS {};\nEXECUTE p{k}({});\n",
                    statement.sql,
                    values.join(",")
                ));
            }
        }
    }
    if let Some(corrupt) = &plan.corrupt {
        out.push_str(corrupt);
        out.push_str(";\n");
    }
    out.push_str(&sql::verification(probe).checksum);
    out.push_str(";\n");
    out
}

/// Runs `script` with psql against `cluster`: its last line of output.
fn psql(cluster: &Cluster, script: &str) -> String {
    let mut child = Command::new(bin_dir().unwrap().join("psql"))
        .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-At", "-F", ":"])
        .args(["-h", "127.0.0.1", "-p", &cluster.port().to_string()])
        .args(["-U", USER, "-d", DATABASE])
        .env("PGPASSWORD", &cluster.password)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "psql failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .last()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn a_cluster_starts_holds_every_strategys_rows_by_checksum_and_stops_without_a_trace() {
    let scratch = tempfile::tempdir_in(crate::paths::project_root().join("target")).unwrap();
    // A directory the postgres user can reach: a tempdir is the owner's alone.
    std::fs::set_permissions(
        scratch.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let paths = Paths::new(scratch.path().to_owned());
    let mut cluster = Cluster::start(&paths).expect("a private cluster starts");
    eprintln!(
        "{}: initdb {:.0} ms, ready {:.0} ms later",
        cluster.version, cluster.initdb_ms, cluster.start_ms
    );
    assert!(
        cluster.version.contains("PostgreSQL"),
        "{}",
        cluster.version
    );
    assert!(
        cluster
            .connection_string()
            .starts_with("postgresql://d1bench:")
    );

    for (id, strategy) in [
        Strategy::PerRow,
        Strategy::Bound,
        Strategy::Literal,
        Strategy::Json,
        Strategy::BatchedRows,
        Strategy::Exec,
    ]
    .into_iter()
    .enumerate()
    {
        let probe = probe(id as u64 + 1, strategy);
        let generator = RowGenerator::new(probe.columns, probe.row_bytes, probe.seed, probe.text);
        let expected = Checksum::expected(&generator, probe.rows);
        let present = Checksum::from_str(&psql(&cluster, &script(&probe))).unwrap();
        assert_eq!(present, expected, "{strategy}");
    }
    // The checksum sees a changed byte, as on D1.
    let mut corrupted = probe(9, Strategy::Bound);
    corrupted.debug_corrupt = Some(Corruption::TextByte);
    let generator = RowGenerator::new(5, 200, 3, corrupted.text);
    let present = Checksum::from_str(&psql(&cluster, &script(&corrupted))).unwrap();
    assert_ne!(present, Checksum::expected(&generator, 30));
    // An empty table's checksum is the host's of no rows.
    let empty = format!(
        "{};\n{};\n",
        sql::create_table("t_empty", 3),
        d1bench_core_pg::checksum::checksum_sql("t_empty", 3)
    );
    assert_eq!(
        Checksum::from_str(&psql(&cluster, &empty)).unwrap(),
        Checksum::of_rows(Vec::new())
    );

    let pgid = cluster.process.pgid();
    let dir = cluster.dir.clone();
    let took = cluster.stop().unwrap();
    eprintln!("stopped in {:.0} ms", took.as_secs_f64() * 1000.0);
    assert!(
        !crate::procs::process_alive(pgid as u32),
        "postgres still runs"
    );
    assert!(!dir.exists(), "{} is left behind", dir.display());
}

#[test]
fn a_leftover_clusters_directory_is_removed_unless_its_server_runs() {
    let root = tempfile::tempdir().unwrap();
    // A run killed outright: its server stopped by the watchdog (which removes postmaster.pid).
    let dead = root.path().join("20001");
    std::fs::create_dir_all(dead.join("data")).unwrap();
    std::fs::write(dead.join(OWNER), "999999999").unwrap();
    // Without a server an hour ago: left behind. Without one yet: a run beside this starting.
    let unstarted = root.path().join("20002");
    std::fs::create_dir_all(&unstarted).unwrap();
    std::fs::File::open(&unstarted)
        .unwrap()
        .set_modified(std::time::SystemTime::now() - Duration::from_secs(3_600))
        .unwrap();
    let starting = root.path().join("20004");
    std::fs::create_dir_all(&starting).unwrap();
    let running = root.path().join("20003");
    std::fs::create_dir_all(running.join("data")).unwrap();
    std::fs::write(running.join(OWNER), std::process::id().to_string()).unwrap();
    let mut removed = clear_leftovers(root.path());
    removed.sort();
    assert_eq!(
        removed,
        [dead.display().to_string(), unstarted.display().to_string()]
    );
    assert!(running.exists() && starting.exists());
}
