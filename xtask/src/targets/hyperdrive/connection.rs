//! A Postgres connection string as the hyperdrive target takes one from the user
//! (`D1BENCH_HYPERDRIVE_URL`), checked before anything starts: `postgres://` or `postgresql://`,
//! a user, a password (wrangler refuses a Hyperdrive binding without one), a host, a port and a
//! database, each error naming what is missing; shown with its password left out. The
//! `remote-hyperdrive` target takes its server the same way.

use std::fmt;

/// A server of the user's to write to instead of a private cluster.
pub const SERVER_VAR: &str = "D1BENCH_HYPERDRIVE_URL";

/// The server of `D1BENCH_HYPERDRIVE_URL`, when it is set; an error naming what is wrong with it.
pub fn given_server() -> anyhow::Result<Option<ConnectionString>> {
    match std::env::var(SERVER_VAR) {
        Ok(text) if !text.is_empty() => ConnectionString::parse(&text).map(Some).map_err(|why| {
            anyhow::anyhow!("{SERVER_VAR} is not a Postgres connection string: {why}")
        }),
        _ => Ok(None),
    }
}

/// The parts of `postgresql://user:password@host:port/database`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionString {
    pub user: String,
    pub password: String,
    pub host: String,
    pub port: u16,
    pub database: String,
}

impl ConnectionString {
    /// The parts of `text`, or what is wrong with it (the password never in the message).
    pub fn parse(text: &str) -> Result<Self, String> {
        let rest = text
            .strip_prefix("postgresql://")
            .or_else(|| text.strip_prefix("postgres://"))
            .ok_or("it does not start with postgresql:// or postgres://")?;
        let rest = rest.split('?').next().unwrap_or_default();
        let (credentials, address) = rest
            .rsplit_once('@')
            .ok_or("it names no user and password (user:password@ before the host)")?;
        let (user, password) = credentials
            .split_once(':')
            .ok_or("it has no password (user:password@): wrangler needs one")?;
        if user.is_empty() {
            return Err("its user is empty".into());
        }
        if password.is_empty() {
            return Err("its password is empty: wrangler needs one".into());
        }
        let (host_port, database) = address
            .split_once('/')
            .ok_or("it names no database (/database after the host)")?;
        if database.is_empty() {
            return Err("its database is empty".into());
        }
        let (host, port) = match host_port.rsplit_once(':') {
            Some((host, port)) => (
                host,
                port.parse::<u16>()
                    .map_err(|_| format!("its port `{port}` is not a port number"))?,
            ),
            None => (host_port, 5432),
        };
        if host.is_empty() {
            return Err("its host is empty".into());
        }
        Ok(ConnectionString {
            user: user.to_owned(),
            password: password.to_owned(),
            host: host.to_owned(),
            port,
            database: database.to_owned(),
        })
    }

    /// The string wrangler is given: no TLS parameters, so it connects straight to the server.
    pub fn full(&self) -> String {
        format!(
            "postgresql://{}:{}@{}:{}/{}",
            self.user, self.password, self.host, self.port, self.database
        )
    }
}

impl fmt::Display for ConnectionString {
    /// The string with its password left out, for messages and records.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "postgresql://{}:***@{}:{}/{}",
            self.user, self.host, self.port, self.database
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_string_parses_and_shows_without_its_password() {
        let c = ConnectionString::parse("postgres://me:s3cret@db.example:6543/app?sslmode=disable")
            .unwrap();
        assert_eq!(
            (
                c.user.as_str(),
                c.host.as_str(),
                c.port,
                c.database.as_str()
            ),
            ("me", "db.example", 6543, "app")
        );
        assert_eq!(c.to_string(), "postgresql://me:***@db.example:6543/app");
        assert_eq!(c.full(), "postgresql://me:s3cret@db.example:6543/app");
        assert_eq!(
            ConnectionString::parse("postgresql://me:pw@localhost/app")
                .unwrap()
                .port,
            5432
        );
    }

    #[test]
    fn each_malformed_string_says_what_is_wrong_and_never_the_password() {
        for (text, says) in [
            ("mysql://me:pw@h:1/db", "does not start with postgresql://"),
            ("postgresql://h:1/db", "names no user and password"),
            ("postgresql://me@h:1/db", "has no password"),
            ("postgresql://me:@h:1/db", "password is empty"),
            ("postgresql://:pw@h:1/db", "user is empty"),
            ("postgresql://me:pw@h:1", "names no database"),
            (
                "postgresql://me:pw@h:port/db",
                "port `port` is not a port number",
            ),
            ("postgresql://me:pw@:1/db", "host is empty"),
        ] {
            let error = ConnectionString::parse(text).unwrap_err();
            assert!(error.contains(says), "{text}: {error}");
            assert!(!error.contains("pw"), "{text}: {error}");
        }
    }
}
