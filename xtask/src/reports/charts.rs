//! What every kind's charts share: a chart written to disk ([`Drawn`]) and where a run measured,
//! in words for a chart's readers ([`measured_on`]). Each kind's charts are in its folder
//! (`studies/<kind>/report/`), every line chart among them the one of [`crate::charts::line`],
//! all drawn in the one style of [`crate::charts::style`].

use std::path::PathBuf;

use crate::base::TargetKind;

/// A chart written to disk.
#[derive(Debug, Clone, PartialEq)]
pub struct Drawn {
    /// File stem: every file of the chart is `<name>.<format>`, side by side.
    pub name: String,
    /// What the chart shows: its title, then what a reader needs to read it.
    pub caption: String,
    pub files: Vec<PathBuf>,
}

/// summary.md's `## Charts` section: each chart's PNG with its caption and its other formats;
/// nothing when there is no chart.
pub fn section(charts: &[Drawn]) -> String {
    let mut out = String::new();
    if !charts.is_empty() {
        out.push_str("\n## Charts\n\n");
        for chart in charts {
            out.push_str(&format!(
                "![{name}]({name}.png)\n\n{} ([SVG]({name}.svg), [PDF]({name}.pdf))\n\n",
                chart.caption,
                name = chart.name
            ));
        }
    }
    out
}

/// Where a run measured, in words for a chart's readers rather than the target's name.
pub fn measured_on(target: TargetKind) -> &'static str {
    match target {
        TargetKind::Local => "local D1 (wrangler dev)",
        TargetKind::Remote => "D1 on Cloudflare",
        TargetKind::Sqlite => "bare SQLite with D1 limits",
        TargetKind::Do => "a Durable Object's SQLite (wrangler dev)",
        TargetKind::RemoteDo => "a Durable Object's SQLite on Cloudflare",
        TargetKind::Hyperdrive => "PostgreSQL through a Hyperdrive binding (wrangler dev)",
        TargetKind::RemoteHyperdrive => "PostgreSQL through Hyperdrive on Cloudflare",
    }
}
