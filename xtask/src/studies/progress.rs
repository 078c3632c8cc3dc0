//! The one progress reporter of every run: a bar on a terminal (when the number of records is
//! known), one plain line per record elsewhere (CI logs).

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

use crate::records::Record;

pub struct Progress {
    bar: Option<ProgressBar>,
    total: Option<usize>,
    done: usize,
}

impl Progress {
    /// `total` records when known (a sweep's probes); `None` for climbs, whose length is found
    /// as they go.
    pub fn new(total: Option<usize>, unit: &str) -> Self {
        let bar = match total {
            Some(total) if std::io::stderr().is_terminal() => {
                let bar = ProgressBar::new(total as u64);
                bar.set_style(
                    ProgressStyle::with_template(&format!(
                        "{{bar:40}} {{pos}}/{{len}} {unit}, {{elapsed}} elapsed, ~{{eta}} left  {{msg}}"
                    ))
                    .expect("the template is valid"),
                );
                Some(bar)
            }
            _ => None,
        };
        Progress {
            bar,
            total,
            done: 0,
        }
    }

    pub fn warn(&self, message: &str) {
        self.say(&format!("warning: {message}"));
    }

    fn say(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
    }

    /// One record done; `warmup` when it is not recorded.
    pub fn record(&mut self, record: &dyn Record, warmup: bool) {
        self.done += 1;
        let mut line = record.describe();
        if warmup {
            line.push_str(" (warm-up)");
        }
        if record.target_failed() {
            line.push_str("  TARGET FAILED (no answer; not a data failure)");
        } else if !record.reconciled() {
            line.push_str(&format!("  NOT RECONCILED: {}", record.reconcile_note()));
        }
        match (&self.bar, self.total) {
            (Some(bar), _) => {
                bar.set_message(line);
                bar.inc(1);
            }
            (None, Some(total)) => eprintln!("[{}/{total}] {line}", self.done),
            (None, None) => eprintln!("[{}] {line}", self.done),
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
