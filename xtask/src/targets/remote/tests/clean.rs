//! `clean-remote` against the stand-in: it finds runs by their databases and by their KV
//! namespaces, deletes only names with the prefix (of a tag, when given), and refuses names
//! that are not a run's.

use super::*;

#[test]
fn clean_remote_deletes_only_runs_with_the_prefix() {
    let stand_in = StandIn::new();
    let list = stand_in.dir.path().join("list.json");
    std::fs::write(
        &list,
        r#"[
  {"uuid": "00000000-0000-4000-8000-000000000001", "name": "d1bench-run-gh42-20261129t235502z-aaaa", "created_at": "2026-11-29T23:55:02Z"},
  {"uuid": "00000000-0000-4000-8000-000000000002", "name": "my-production-db"},
  {"uuid": "00000000-0000-4000-8000-000000000003", "name": "d1bench-run-20261128t101010z-bbbb"}
]"#,
    )
    .unwrap();
    // A run whose database is gone but whose KV namespace is left is found by its title.
    let kv_list = stand_in.dir.path().join("kv-list.json");
    std::fs::write(
        &kv_list,
        format!(
            r#"[
  {{"id": "{KV_ID}", "title": "d1bench-run-20261127t090909z-cccc", "supports_url_encoding": true}},
  {{"id": "11111111111111111111111111111111", "title": "sessions", "supports_url_encoding": true}},
  {{"id": "22222222222222222222222222222222", "title": "d1bench-run-20261128t101010z-bbbb", "supports_url_encoding": true}}
]"#
        ),
    )
    .unwrap();
    let list = list.display().to_string();
    let kv_list = kv_list.display().to_string();
    let env = [
        ("STAND_IN_LIST", list.as_str()),
        ("STAND_IN_KV_LIST", kv_list.as_str()),
    ];
    let tagged = "d1bench-run-gh42-20261129t235502z-aaaa";
    let untagged = "d1bench-run-20261128t101010z-bbbb";
    let namespace_only = "d1bench-run-20261127t090909z-cccc";
    let listing = [
        line("d1 list --json", "none"),
        line("kv namespace list", "none"),
    ];
    let all = |name: &str| [delete(name), kv_delete(name), d1_delete(name)];

    let names = clean(&stand_in.wrangler(&env), None, &[], None, true).unwrap();
    assert_eq!(names, [namespace_only, untagged, tagged]);
    assert_eq!(stand_in.calls(), listing);

    let stand_in = StandIn::new();
    clean(&stand_in.wrangler(&env), None, &[], Some("gh42"), false).unwrap();
    assert_eq!(
        stand_in.calls(),
        [listing.to_vec(), all(tagged).to_vec()].concat()
    );

    let stand_in = StandIn::new();
    clean(&stand_in.wrangler(&env), None, &[], None, false).unwrap();
    assert_eq!(
        stand_in.calls(),
        [
            listing.to_vec(),
            all(namespace_only).to_vec(),
            all(untagged).to_vec(),
            all(tagged).to_vec()
        ]
        .concat()
    );

    let stand_in = StandIn::new();
    let err = clean(
        &stand_in.wrangler(&env),
        None,
        &["my-production-db".into()],
        None,
        false,
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("`my-production-db` is not the name of a d1bench run"),
        "{err}"
    );
    assert!(stand_in.calls().is_empty());
}
