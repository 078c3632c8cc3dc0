//! The citation and licence files agree with the workspace's Cargo.toml: CITATION.cff carries
//! its version and its licences, and each licence it declares has its file at the root.

mod support;

use support::project_root;

fn citation() -> String {
    std::fs::read_to_string(project_root().join("CITATION.cff")).unwrap()
}

/// The value of a top-level `key: value` line of CITATION.cff.
fn top_level<'a>(cff: &'a str, key: &str) -> Option<&'a str> {
    cff.lines()
        .find_map(|line| line.strip_prefix(&format!("{key}: ")))
        .map(|value| value.trim().trim_matches('"'))
}

#[test]
fn the_citation_has_the_workspace_version_and_a_release_date() {
    let cff = citation();
    assert_eq!(top_level(&cff, "cff-version"), Some("1.2.0"));
    assert_eq!(top_level(&cff, "type"), Some("software"));
    assert_eq!(top_level(&cff, "version"), Some(env!("CARGO_PKG_VERSION")));
    let date = top_level(&cff, "date-released").expect("a date-released");
    let parts: Vec<&str> = date.split('-').collect();
    assert!(
        parts.len() == 3
            && [4, 2, 2]
                .iter()
                .zip(&parts)
                .all(|(n, p)| p.len() == *n && p.bytes().all(|b| b.is_ascii_digit())),
        "date-released {date} is not YYYY-MM-DD"
    );
}

#[test]
fn every_licence_the_workspace_declares_is_cited_and_has_its_file() {
    let declared = env!("CARGO_PKG_LICENSE");
    assert_eq!(declared, "MIT OR Apache-2.0");
    let cff = citation();
    let cited: Vec<&str> = cff
        .split_once("\nlicense:\n")
        .expect("a license list")
        .1
        .lines()
        .map_while(|line| line.strip_prefix("  - "))
        .collect();
    assert_eq!(cited, declared.split(" OR ").collect::<Vec<_>>());
    for (licence, file, words) in [
        (
            "MIT",
            "LICENSE-MIT",
            "Permission is hereby granted, free of charge",
        ),
        (
            "Apache-2.0",
            "LICENSE-APACHE",
            "Apache License\n                           Version 2.0, January 2004",
        ),
    ] {
        let text = std::fs::read_to_string(project_root().join(file))
            .unwrap_or_else(|e| panic!("{licence}: cannot read {file}: {e}"));
        assert!(text.contains(words), "{file} is not the {licence} text");
        assert!(
            text.contains("d1bench contributors"),
            "{file} names no copyright holder"
        );
    }
}
