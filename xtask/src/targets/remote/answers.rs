//! What wrangler's answers say, read off its output: the id and region of a database it
//! created, the address a deploy lists, the databases on the account.

use anyhow::{Context, Result};
use serde::Deserialize;

/// The database id in `wrangler d1 create`'s answer: the UUID after `database_id`, whether
/// wrangler printed the binding snippet as TOML (`database_id = "..."`) or JSON.
pub fn parse_database_id(text: &str) -> Option<String> {
    let after = &text[text.find("database_id")? + "database_id".len()..];
    find_uuid(after)
}

/// The first UUID (8-4-4-4-12 hex digits) in `text`.
fn find_uuid(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let shape = [8, 4, 4, 4, 12];
    (0..bytes.len()).find_map(|start| {
        let mut at = start;
        for (i, len) in shape.iter().enumerate() {
            if i > 0 {
                if bytes.get(at) != Some(&b'-') {
                    return None;
                }
                at += 1;
            }
            let group = bytes.get(at..at + len)?;
            if !group.iter().all(u8::is_ascii_hexdigit) {
                return None;
            }
            at += len;
        }
        let clean_edge = |b: Option<&u8>| b.is_none_or(|b| !b.is_ascii_alphanumeric());
        (clean_edge(start.checked_sub(1).and_then(|s| bytes.get(s))) && clean_edge(bytes.get(at)))
            .then(|| text[start..at].to_owned())
    })
}

/// The region in `✅ Successfully created DB '<name>' in region WEUR`, when wrangler says it.
pub fn parse_created_region(text: &str) -> Option<String> {
    let after = &text[text.find(" in region ")? + " in region ".len()..];
    let region: String = after
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (!region.is_empty()).then_some(region)
}

/// The `https://<worker>.<subdomain>.workers.dev` URL `wrangler deploy` lists under its triggers.
pub fn parse_workers_dev_url(text: &str, worker: &str) -> Option<String> {
    let prefix = format!("https://{worker}.");
    let workers_dev = text
        .split_whitespace()
        .map(|word| word.trim_end_matches(['/', ',', '.', ')']))
        .find(|word| word.starts_with(&prefix) && word.ends_with(".workers.dev"))
        .map(str::to_owned);
    // Otherwise the address deploy printed on a line of its own, as it lists a Worker's
    // triggers (the stand-in's local wrangler dev address is one such line).
    workers_dev.or_else(|| {
        text.lines()
            .map(str::trim)
            .find(|line| {
                (line.starts_with("https://") || line.starts_with("http://"))
                    && !line.contains(char::is_whitespace)
                    && !line.trim_end_matches('/').ends_with(".workers.dev")
            })
            .map(|line| line.trim_end_matches('/').to_owned())
    })
}

/// A database as `wrangler d1 list --json` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ListedDatabase {
    pub name: String,
    pub uuid: String,
    #[serde(default)]
    pub created_at: Option<String>,
}

/// `wrangler d1 list --json`'s answer: a JSON array of databases (anything printed before the
/// array, such as a warning, is skipped).
pub fn parse_database_list(stdout: &str) -> Result<Vec<ListedDatabase>> {
    let start = stdout.find('[').with_context(|| {
        format!(
            "`wrangler d1 list --json` printed no JSON array:\n{}",
            tail(stdout, 10)
        )
    })?;
    let mut stream = serde_json::Deserializer::from_str(&stdout[start..]).into_iter();
    stream
        .next()
        .context("`wrangler d1 list --json` printed an empty answer")?
        .with_context(|| {
            format!(
                "cannot read the database list wrangler printed:\n{}",
                tail(stdout, 10)
            )
        })
}

/// The namespace id in `wrangler kv namespace create`'s snippet (`"id": "<32 hex digits>"` in
/// JSON, `id = "…"` in TOML).
pub fn parse_kv_namespace_id(text: &str) -> Option<String> {
    let mut rest = text;
    while let Some(at) = rest.find("id") {
        let before = rest[..at].chars().next_back();
        let after = &rest[at + 2..];
        rest = after;
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let value = after.trim_start_matches(['"', ' ', ':', '=']);
        let id: String = value.chars().take_while(char::is_ascii_hexdigit).collect();
        let closes = value[id.len()..].starts_with('"');
        if id.len() == 32 && closes {
            return Some(id);
        }
    }
    None
}

/// One namespace of `wrangler kv namespace list`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ListedNamespace {
    pub id: String,
    pub title: String,
}

/// `wrangler kv namespace list`'s answer: a JSON array of namespaces (anything printed before
/// it skipped).
pub fn parse_kv_namespace_list(stdout: &str) -> Result<Vec<ListedNamespace>> {
    let start = stdout.find('[').with_context(|| {
        format!(
            "`wrangler kv namespace list` printed no JSON array:\n{}",
            tail(stdout, 10)
        )
    })?;
    let mut stream = serde_json::Deserializer::from_str(&stdout[start..]).into_iter();
    stream
        .next()
        .context("`wrangler kv namespace list` printed an empty answer")?
        .with_context(|| {
            format!(
                "cannot read the KV namespace list wrangler printed:\n{}",
                tail(stdout, 10)
            )
        })
}

/// The last `lines` lines of `text`.
pub fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.trim().lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}
