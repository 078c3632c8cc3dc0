//! Loopback ports for wrangler dev that no other socket on this machine is about to take.
//!
//! A port the kernel hands out for `bind(0)` lies in its ephemeral range, which is also where
//! every outgoing connection takes its local port: the probes' own HTTP connections, workerd's
//! internal listeners and those of other runs beside this one. Released and bound again by
//! wrangler a second later, such a port can be taken meanwhile (CI saw wrangler dev fail with
//! "Address already in use" on one). So ports are drawn at random from below the ephemeral range,
//! where nothing takes a port unasked, and checked free by binding them; what can still collide
//! (two runs drawing the same port at once) is caught by the caller, which starts again on
//! another draw ([`in_use`]).

use std::net::TcpListener;

use anyhow::{Context, Result, bail};

/// The lowest port drawn: well above the registered services most machines run.
const LOWEST: u16 = 20_000;

/// How many draws before giving up on finding a free port.
const DRAWS: usize = 200;

/// The kernel's ephemeral range (`net.ipv4.ip_local_port_range`), or Linux's default.
fn ephemeral_range() -> (u16, u16) {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|text| parse_range(&text))
        .unwrap_or((32_768, 60_999))
}

fn parse_range(text: &str) -> Option<(u16, u16)> {
    let mut fields = text.split_whitespace().map(str::parse::<u16>);
    let (low, high) = (fields.next()?.ok()?, fields.next()?.ok()?);
    (low <= high).then_some((low, high))
}

/// The ports to draw from: below the ephemeral range when there is room, else above it; `None`
/// when neither leaves a thousand ports.
fn outside(ephemeral: (u16, u16)) -> Option<(u16, u16)> {
    let (low, high) = ephemeral;
    if low > LOWEST && low - LOWEST >= 1_000 {
        Some((LOWEST, low - 1))
    } else if high < u16::MAX && u16::MAX - high >= 1_000 {
        Some((high + 1, u16::MAX))
    } else {
        None
    }
}

/// `count` distinct free loopback ports outside the kernel's ephemeral range (inside it, as the
/// kernel picks them, when the range leaves no room outside).
pub fn free_ports(count: usize, rng: &mut fastrand::Rng) -> Result<Vec<u16>> {
    let mut ports = Vec::with_capacity(count);
    let Some((low, high)) = outside(ephemeral_range()) else {
        for _ in 0..count {
            let listener =
                TcpListener::bind(("127.0.0.1", 0)).context("cannot find a free loopback port")?;
            ports.push(listener.local_addr()?.port());
        }
        return Ok(ports);
    };
    for _ in 0..DRAWS {
        if ports.len() == count {
            break;
        }
        let port = rng.u16(low..=high);
        if !ports.contains(&port) && TcpListener::bind(("127.0.0.1", port)).is_ok() {
            ports.push(port);
        }
    }
    if ports.len() < count {
        bail!(
            "found {} of {count} free loopback ports in {low}–{high} after {DRAWS} draws",
            ports.len()
        );
    }
    Ok(ports)
}

/// Whether wrangler's log says it could not bind its port because another socket held it.
pub fn in_use(log: &str) -> bool {
    log.contains("Address already in use") || log.contains("EADDRINUSE")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_drawn_outside_the_ephemeral_range() {
        assert_eq!(outside((32_768, 60_999)), Some((20_000, 32_767)));
        assert_eq!(outside((1_024, 60_999)), Some((61_000, 65_535)));
        assert_eq!(outside((1_024, 65_535)), None);
        assert_eq!(parse_range("32768\t60999\n"), Some((32_768, 60_999)));
        assert_eq!(parse_range("60999 32768"), None);
        assert_eq!(parse_range("garbage"), None);
    }

    #[test]
    fn the_ports_found_are_distinct_free_and_outside() {
        let mut rng = fastrand::Rng::with_seed(1);
        let ports = free_ports(2, &mut rng).unwrap();
        assert_eq!(ports.len(), 2);
        assert_ne!(ports[0], ports[1]);
        if let Some((low, high)) = outside(ephemeral_range()) {
            assert!(ports.iter().all(|p| (low..=high).contains(p)), "{ports:?}");
        }
        for port in ports {
            TcpListener::bind(("127.0.0.1", port)).expect("still free");
        }
    }

    #[test]
    fn a_held_port_is_never_handed_out() {
        // Draw with a seed, hold what it drew, and draw again with the same seed.
        let first = free_ports(1, &mut fastrand::Rng::with_seed(7)).unwrap()[0];
        let _held = TcpListener::bind(("127.0.0.1", first)).unwrap();
        let again = free_ports(1, &mut fastrand::Rng::with_seed(7)).unwrap()[0];
        assert_ne!(first, again);
    }

    #[test]
    fn wranglers_refusal_to_bind_is_recognised() {
        assert!(in_use(
            "✘ [ERROR] Address already in use (127.0.0.1:39447). Please check that you are not \
             already running a server on this address"
        ));
        assert!(in_use(
            "Error: listen EADDRINUSE: address already in use 127.0.0.1:8787"
        ));
        assert!(!in_use("✘ [ERROR] Could not resolve \"./build/index.js\""));
    }
}
