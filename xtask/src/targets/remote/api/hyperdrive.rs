//! A `remote-hyperdrive` session's Hyperdrive configuration through Cloudflare's REST API
//! (`/accounts/{account}/hyperdrive/configs`): created for the user's server with the password in
//! the request's body (`wrangler hyperdrive create` takes it only as an argument, where every
//! process on the machine can read it), listed by name (how a teardown cut short and
//! `clean-remote` find one), and deleted.
//!
//! The configuration is created with Hyperdrive's query cache off: a probe's verification reads
//! back what it wrote, and an answer from the cache would reconcile nothing; the writes are never
//! cached either way.

use anyhow::{Context, Result};
use serde::Deserialize;

use super::{Api, result_of};
use crate::targets::hyperdrive::connection::ConnectionString;

/// A Hyperdrive configuration as the API lists it (the fields read here).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Config {
    pub id: String,
    pub name: String,
}

/// How a deletion went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deleted {
    Now,
    /// The API had no such configuration: deleted before, or never created.
    AlreadyGone,
}

impl Api {
    fn configs_url(&self) -> String {
        format!("{}/hyperdrive/configs", self.account_url())
    }

    /// Creates the configuration `name` for the server `origin`, caching off; its id and name
    /// as the API answered.
    pub fn create_hyperdrive(&self, name: &str, origin: &ConnectionString) -> Result<Config> {
        let url = self.configs_url();
        let body = serde_json::json!({
            "name": name,
            "origin": {
                "scheme": "postgres",
                "host": origin.host,
                "port": origin.port,
                "database": origin.database,
                "user": origin.user,
                "password": origin.password,
            },
            "caching": { "disabled": true },
        })
        .to_string();
        let what =
            || format!("POST {url} (creating the Hyperdrive configuration {name} for {origin})");
        let (status, text) = self.call("POST", &url, Some(&body)).with_context(what)?;
        let config: Option<Config> = result_of(status, &text).with_context(what)?;
        config.with_context(|| {
            format!(
                "{}: the API answered {status} without the configuration's id",
                what()
            )
        })
    }

    /// Every Hyperdrive configuration on the account.
    pub fn list_hyperdrive(&self) -> Result<Vec<Config>> {
        let url = self.configs_url();
        let what = || format!("GET {url} (listing Hyperdrive configurations)");
        let (status, text) = self.call("GET", &url, None).with_context(what)?;
        let configs: Option<Vec<Config>> = result_of(status, &text).with_context(what)?;
        Ok(configs.unwrap_or_default())
    }

    /// Deletes the configuration `id`; one the API does not know counts as deleted.
    pub fn delete_hyperdrive(&self, id: &str) -> Result<Deleted> {
        let url = format!("{}/{id}", self.configs_url());
        let what = || format!("DELETE {url} (deleting a Hyperdrive configuration)");
        let (status, text) = self.call("DELETE", &url, None).with_context(what)?;
        if status == 404 {
            return Ok(Deleted::AlreadyGone);
        }
        result_of::<serde_json::Value>(status, &text).with_context(what)?;
        Ok(Deleted::Now)
    }
}

#[cfg(test)]
mod tests {
    use super::super::on_loopback as serve;
    use super::*;

    fn origin() -> ConnectionString {
        ConnectionString::parse("postgresql://me:pa55word@db.example:6543/app").unwrap()
    }

    #[test]
    fn a_configuration_is_created_with_the_password_in_the_body_and_caching_off() {
        let (api, server) = serve(vec![(
            200,
            r#"{"success":true,"errors":[],"messages":[],"result":{"id":"hd-1","name":"d1bench-run-x","origin":{"host":"db.example"}}}"#,
        )]);
        let config = api.create_hyperdrive("d1bench-run-x", &origin()).unwrap();
        assert_eq!(config.id, "hd-1");
        let request = &server.join().unwrap()[0];
        assert!(
            request.starts_with("POST /client/v4/accounts/acct-9/hyperdrive/configs "),
            "{request}"
        );
        let body: serde_json::Value =
            serde_json::from_str(request.split_once("\r\n\n").unwrap().1).unwrap();
        assert_eq!(body["origin"]["password"], "pa55word");
        assert_eq!(body["origin"]["port"], 6543);
        assert_eq!(body["caching"]["disabled"], true);
    }

    #[test]
    fn a_refusal_names_the_apis_words_and_never_the_password() {
        let (api, _server) = serve(vec![(
            400,
            r#"{"success":false,"errors":[{"code":2008,"message":"Failed to connect to the origin"}],"result":null}"#,
        )]);
        let error = format!(
            "{:#}",
            api.create_hyperdrive("d1bench-run-x", &origin())
                .unwrap_err()
        );
        assert!(
            error.contains("Failed to connect to the origin (code 2008)"),
            "{error}"
        );
        assert!(
            error.contains("postgresql://me:***@db.example:6543/app"),
            "{error}"
        );
        assert!(!error.contains("pa55word"), "{error}");
    }

    #[test]
    fn listing_reads_names_and_a_missing_configuration_counts_as_deleted() {
        let (api, server) = serve(vec![
            (
                200,
                r#"{"success":true,"errors":[],"result":[{"id":"a","name":"d1bench-run-1"},{"id":"b","name":"mine"}]}"#,
            ),
            (
                404,
                r#"{"success":false,"errors":[{"code":2007,"message":"not found"}],"result":null}"#,
            ),
            (200, r#"{"success":true,"errors":[],"result":null}"#),
        ]);
        let listed = api.list_hyperdrive().unwrap();
        assert_eq!(
            listed.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
            ["d1bench-run-1", "mine"]
        );
        assert_eq!(api.delete_hyperdrive("gone").unwrap(), Deleted::AlreadyGone);
        assert_eq!(api.delete_hyperdrive("a").unwrap(), Deleted::Now);
        let requests = server.join().unwrap();
        assert!(requests[2].starts_with("DELETE /client/v4/accounts/acct-9/hyperdrive/configs/a "));
    }
}
