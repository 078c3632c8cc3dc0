//! The one CSV writer and reader of every record file (`results.csv`, `findings.csv`,
//! `parity.csv`): appends flush after each row, so an interrupted run keeps what it measured. A
//! file may also be read gzipped (`results.csv.gz` beside where `results.csv` would be): large
//! committed example runs are kept that way.

use std::fs::File;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Appends rows of `T` to a CSV file, creating it if missing, with the header written only into
/// an empty file (a run's baseline appends its rows after the target's).
pub struct Appender<T> {
    writer: ::csv::Writer<File>,
    path: PathBuf,
    row: PhantomData<fn(&T)>,
}

impl<T: Serialize> Appender<T> {
    pub fn open(path: &Path) -> Result<Self> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("cannot open {} to append", path.display()))?;
        let empty = file
            .metadata()
            .with_context(|| format!("cannot read the size of {}", path.display()))?
            .len()
            == 0;
        Ok(Appender {
            writer: ::csv::WriterBuilder::new()
                .has_headers(empty)
                .from_writer(file),
            path: path.to_owned(),
            row: PhantomData,
        })
    }

    /// Writes one row and flushes it to the file.
    pub fn append(&mut self, row: &T) -> Result<()> {
        self.writer
            .serialize(row)
            .with_context(|| format!("cannot write to {}", self.path.display()))?;
        self.writer
            .flush()
            .with_context(|| format!("cannot flush {}", self.path.display()))
    }
}

/// Writes `rows` as the whole file.
pub fn write<T: Serialize>(path: &Path, rows: &[T]) -> Result<()> {
    let mut writer = ::csv::Writer::from_path(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    for row in rows {
        writer
            .serialize(row)
            .with_context(|| format!("cannot write to {}", path.display()))?;
    }
    writer
        .flush()
        .with_context(|| format!("cannot flush {}", path.display()))
}

/// `path` with `.gz` appended: where a gzipped copy of it is looked for.
fn gzipped(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".gz");
    PathBuf::from(name)
}

/// Whether `path`, or its gzipped copy, is there to [`read`].
pub fn exists(path: &Path) -> bool {
    path.exists() || gzipped(path).exists()
}

/// Reads a record file back (or, when it is absent, its gzipped copy); a malformed row is named
/// by its file and line.
pub fn read<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>> {
    let gz = gzipped(path);
    if !path.exists() && gz.exists() {
        let file = File::open(&gz).with_context(|| format!("cannot open {}", gz.display()))?;
        return read_from(
            ::csv::Reader::from_reader(flate2::read::GzDecoder::new(file)),
            &gz,
        );
    }
    let reader = ::csv::Reader::from_path(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    read_from(reader, path)
}

fn read_from<T: DeserializeOwned, R: std::io::Read>(
    mut reader: ::csv::Reader<R>,
    path: &Path,
) -> Result<Vec<T>> {
    reader
        .deserialize()
        .enumerate()
        .map(|(i, row)| {
            row.with_context(|| {
                format!(
                    "{}:{}: this row is not a d1bench record of this file's kind",
                    path.display(),
                    i + 2
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Row {
        a: u32,
        b: String,
    }

    #[test]
    fn appends_are_on_disk_at_once_under_one_header() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.csv");
        let first = Row {
            a: 1,
            b: "one, \"quoted\"\nline".into(),
        };
        let mut writer = Appender::open(&path).unwrap();
        writer.append(&first).unwrap();
        // Flushed: readable while the writer is still open.
        assert_eq!(read::<Row>(&path).unwrap(), vec![first]);
        Appender::open(&path)
            .unwrap()
            .append(&Row {
                a: 2,
                b: "two".into(),
            })
            .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.matches("a,b").count(), 1, "{text}");
        assert_eq!(read::<Row>(&path).unwrap().len(), 2);
    }

    #[test]
    fn a_malformed_row_is_named_by_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.csv");
        std::fs::write(&path, "a,b\n1,x\nnot a number,y\n").unwrap();
        let err = format!("{:#}", read::<Row>(&path).unwrap_err());
        assert!(err.contains("x.csv:3: this row is not"), "{err}");
    }

    #[test]
    fn a_gzipped_file_reads_as_the_file_and_names_itself_in_errors() {
        use std::io::Write as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.csv");
        assert!(!exists(&path));
        let gz = |text: &str| {
            let mut encoder = flate2::write::GzEncoder::new(
                File::create(dir.path().join("x.csv.gz")).unwrap(),
                flate2::Compression::default(),
            );
            encoder.write_all(text.as_bytes()).unwrap();
            encoder.finish().unwrap();
        };
        gz("a,b\n1,x\n2,y\n");
        assert!(exists(&path));
        assert_eq!(read::<Row>(&path).unwrap().len(), 2);
        gz("a,b\n1,x\nnot a number,y\n");
        let err = format!("{:#}", read::<Row>(&path).unwrap_err());
        assert!(err.contains("x.csv.gz:3: this row is not"), "{err}");
        // The plain file, when there, is the one read.
        std::fs::write(&path, "a,b\n7,z\n").unwrap();
        assert_eq!(read::<Row>(&path).unwrap()[0].a, 7);
    }
}
