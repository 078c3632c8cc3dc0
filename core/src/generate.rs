//! The deterministic row generator: row `i` of a probe is a pure function of (shape, seed, i).
//!
//! The Worker generates the rows it writes; the tests (and later reconciliation) replay the same
//! rows on the host. Column `j` is `INTEGER` when `j % 3 == 2`, otherwise `TEXT`, so one- and
//! two-column tables are all text. A row's size is its payload: the UTF-8 bytes of its texts plus
//! [`INTEGER_BYTES`] per integer. Texts share the row's byte budget evenly and hit it exactly.

use serde::{Deserialize, Serialize};

/// Bytes an integer value counts for in a row's payload size.
pub const INTEGER_BYTES: usize = 8;

/// Largest magnitude of a generated integer: 2^53 - 1, exact in a JavaScript number, so bound
/// integers reach D1 unchanged.
pub const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// One value of a generated row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Integer(i64),
    Text(String),
}

/// The SQL type of a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    Integer,
    Text,
}

impl ColumnType {
    pub fn sql(self) -> &'static str {
        match self {
            ColumnType::Integer => "INTEGER",
            ColumnType::Text => "TEXT",
        }
    }
}

/// The type of column `j` (0-based).
pub fn column_type(j: usize) -> ColumnType {
    if j % 3 == 2 {
        ColumnType::Integer
    } else {
        ColumnType::Text
    }
}

/// How many of the first `columns` columns are integers: every third one.
pub fn integer_columns(columns: usize) -> usize {
    columns / 3
}

/// What the generated text values contain. Each share is drawn for each value on its own, so a
/// value can be escaping, non-ASCII and hold a NUL at once.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct TextMix {
    /// Share (0 to 1) of text values with characters that SQL text escapes or that trip
    /// escaping code: single quotes (doubled in a literal), backslashes, newlines, carriage
    /// returns, double quotes and percent signs. Such a value starts with one of them. No NUL:
    /// that is [`TextMix::nul_share`].
    #[serde(default)]
    pub escape_share: f64,
    /// Share (0 to 1) of text values that start with a NUL. SQL text cannot hold a NUL, so a
    /// literal writes the whole value in hex (`CAST(X'..' AS TEXT)`, twice its bytes and more);
    /// a bound value carries it as it is.
    #[serde(default)]
    pub nul_share: f64,
    /// Share (0 to 1) of text values made of multi-byte UTF-8 characters (2, 3 and 4 bytes).
    #[serde(default)]
    pub non_ascii_share: f64,
}

impl Default for TextMix {
    fn default() -> Self {
        TextMix {
            escape_share: 0.0,
            nul_share: 0.0,
            non_ascii_share: 0.0,
        }
    }
}

impl TextMix {
    /// Every value needs escaping, holds a NUL and is non-ASCII: the mix the escaping tests use.
    pub const HOSTILE: TextMix = TextMix {
        escape_share: 1.0,
        nul_share: 1.0,
        non_ascii_share: 1.0,
    };
}

const PLAIN: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
/// Drawn with the low 3 bits of a draw. The quote at index 4 was a NUL until NUL got a share of
/// its own: escaping values are what they were with every NUL a quote.
const NEEDS_ESCAPE: &[char] = &['\'', '\'', '\\', '\n', '\'', '"', '%', '\r'];
const MULTI_BYTE: &[char] = &['é', 'ß', 'Ж', '日', '本', '€', '🦀', '𝄞'];

/// Every byte a generated text can contain, sorted and without repeats: the ASCII letters and
/// digits, the characters that need escaping, NUL, and the UTF-8 bytes of the multi-byte
/// characters. The list is complete, so the content checksum can count exactly these bytes.
pub fn text_alphabet() -> Vec<u8> {
    let mut bytes: Vec<u8> = PLAIN.to_vec();
    let mut buffer = [0u8; 4];
    for &c in NEEDS_ESCAPE.iter().chain(&['\0']).chain(MULTI_BYTE) {
        bytes.extend_from_slice(c.encode_utf8(&mut buffer).as_bytes());
    }
    bytes.sort_unstable();
    bytes.dedup();
    bytes
}

/// A small, fast, well-mixed PRNG (SplitMix64): the same seed gives the same rows everywhere.
#[derive(Debug, Clone)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform float in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// One plain character: `PLAIN[below(62)]`, as a byte.
    fn plain(&mut self) -> u8 {
        PLAIN[self.below(PLAIN.len())]
    }
}

/// Generates the rows of one probe.
#[derive(Debug, Clone)]
pub struct RowGenerator {
    columns: usize,
    seed: u64,
    text: TextMix,
    /// UTF-8 bytes of each text column, indexed by column.
    text_bytes: Vec<usize>,
}

impl RowGenerator {
    pub fn new(columns: usize, row_bytes: usize, seed: u64, text: TextMix) -> Self {
        let text_columns: Vec<usize> = (0..columns)
            .filter(|&j| column_type(j) == ColumnType::Text)
            .collect();
        let integer_columns = columns - text_columns.len();
        let budget = row_bytes.saturating_sub(integer_columns * INTEGER_BYTES);
        let mut text_bytes = vec![0; columns];
        if !text_columns.is_empty() {
            let each = budget / text_columns.len();
            let extra = budget % text_columns.len();
            for (k, &j) in text_columns.iter().enumerate() {
                text_bytes[j] = each + usize::from(k < extra);
            }
        }
        RowGenerator {
            columns,
            seed,
            text,
            text_bytes,
        }
    }

    /// The smallest `row_bytes` whose rows come out at exactly that size with `columns` columns:
    /// the integers' [`INTEGER_BYTES`] each (the texts share what is left and may be empty), and
    /// at least one byte, as a row without payload measures nothing. Below it the integers alone
    /// overflow the budget and [`RowGenerator::row_payload_bytes`] is more than was asked.
    pub fn min_row_bytes(columns: usize) -> usize {
        (integer_columns(columns) * INTEGER_BYTES).max(1)
    }

    pub fn columns(&self) -> usize {
        self.columns
    }

    /// The payload bytes of every row: what `row_bytes` asked for, unless it is below
    /// [`RowGenerator::min_row_bytes`] and the integers alone exceed it.
    pub fn row_payload_bytes(&self) -> usize {
        (0..self.columns)
            .map(|j| match column_type(j) {
                ColumnType::Integer => INTEGER_BYTES,
                ColumnType::Text => self.text_bytes[j],
            })
            .sum()
    }

    /// Row `index` of the probe.
    pub fn row(&self, index: u64) -> Vec<Value> {
        let mut rng = SplitMix64(self.seed ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03));
        rng.next();
        (0..self.columns)
            .map(|j| match column_type(j) {
                ColumnType::Integer => {
                    let magnitude = (rng.next() % (MAX_SAFE_INTEGER as u64 + 1)) as i64;
                    Value::Integer(if rng.next() & 1 == 0 {
                        magnitude
                    } else {
                        -magnitude
                    })
                }
                ColumnType::Text => Value::Text(self.text(&mut rng, self.text_bytes[j])),
            })
            .collect()
    }

    /// A text of exactly `bytes` UTF-8 bytes, hostile or plain as the mix decides: one draw
    /// per character (two or three in hostile text: whether to escape, whether to be
    /// multi-byte, which one).
    fn text(&self, rng: &mut SplitMix64, bytes: usize) -> String {
        let escape = rng.unit() < self.text.escape_share;
        let non_ascii = rng.unit() < self.text.non_ascii_share;
        // Drawn only when the mix asks for NUL: a mix without it gives the rows it gave before
        // NUL had a share of its own.
        let nul = self.text.nul_share > 0.0 && rng.unit() < self.text.nul_share;
        if !escape && !non_ascii && !nul {
            // Most text, and the same characters as the loop below would draw: one byte per
            // draw, collected in one pass without a length check and UTF-8 encoding per
            // character (half the time in wasm).
            let plain: Vec<u8> = (0..bytes).map(|_| rng.plain()).collect();
            return String::from_utf8(plain).expect("plain text is ASCII");
        }
        let mut out = String::with_capacity(bytes);
        // One NUL, first, is all it takes to send a literal down the hex path.
        if nul && bytes > 0 {
            out.push('\0');
        }
        let first = out.len();
        while out.len() < bytes {
            let left = bytes - out.len();
            // The first character (after a NUL) of an escaping value is always one that needs
            // escaping, so a value marked as needing it really does.
            let want_escape = escape && (out.len() == first || rng.below(4) == 0);
            let c = if want_escape {
                NEEDS_ESCAPE[rng.below(NEEDS_ESCAPE.len())]
            } else if non_ascii && rng.below(2) == 0 {
                MULTI_BYTE[rng.below(MULTI_BYTE.len())]
            } else {
                char::from(rng.plain())
            };
            if c.len_utf8() <= left {
                out.push(c);
            } else {
                out.push(char::from(rng.plain()));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload(row: &[Value]) -> usize {
        row.iter()
            .map(|v| match v {
                Value::Integer(_) => INTEGER_BYTES,
                Value::Text(s) => s.len(),
            })
            .sum()
    }

    #[test]
    fn same_seed_same_rows_other_seed_other_rows() {
        let a = RowGenerator::new(7, 300, 42, TextMix::HOSTILE);
        let b = RowGenerator::new(7, 300, 42, TextMix::HOSTILE);
        let c = RowGenerator::new(7, 300, 43, TextMix::HOSTILE);
        assert_eq!(a.row(5), b.row(5));
        assert_ne!(a.row(5), c.row(5));
        assert_ne!(a.row(5), a.row(6));
    }

    #[test]
    fn rows_hit_the_requested_size_exactly() {
        for columns in [1, 2, 3, 4, 10, 64, 100] {
            for row_bytes in [8 * 34, 100, 1_000, 4_097, 131_072] {
                for mix in [TextMix::default(), TextMix::HOSTILE] {
                    let generator = RowGenerator::new(columns, row_bytes, 9, mix);
                    let integers = (0..columns)
                        .filter(|&j| column_type(j) == ColumnType::Integer)
                        .count();
                    let expected = row_bytes.max(integers * INTEGER_BYTES);
                    assert_eq!(generator.row_payload_bytes(), expected);
                    for i in 0..5 {
                        assert_eq!(
                            payload(&generator.row(i)),
                            expected,
                            "C={columns} bytes={row_bytes}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn min_row_bytes_is_exactly_where_rows_stop_hitting_their_size() {
        for columns in 1..=300 {
            let min = RowGenerator::min_row_bytes(columns);
            let integers = (0..columns)
                .filter(|&j| column_type(j) == ColumnType::Integer)
                .count();
            assert_eq!(integer_columns(columns), integers);
            assert_eq!(min, (integers * INTEGER_BYTES).max(1), "C={columns}");
            for row_bytes in min..min + 40 {
                let generator = RowGenerator::new(columns, row_bytes, 5, TextMix::HOSTILE);
                assert_eq!(generator.row_payload_bytes(), row_bytes, "C={columns}");
                assert_eq!(payload(&generator.row(0)), row_bytes, "C={columns}");
            }
            if integers > 0 {
                let generator = RowGenerator::new(columns, min - 1, 5, TextMix::HOSTILE);
                assert_eq!(generator.row_payload_bytes(), min, "C={columns}");
            }
        }
        // 50 columns hold 16 integers: 128 bytes, however few are asked for.
        assert_eq!(RowGenerator::min_row_bytes(50), 128);
        assert_eq!(
            RowGenerator::new(50, 3, 1, TextMix::default()).row_payload_bytes(),
            128
        );
    }

    #[test]
    fn column_types_repeat_text_text_integer() {
        let types: Vec<_> = (0..6).map(column_type).collect();
        use ColumnType::*;
        assert_eq!(types, [Text, Text, Integer, Text, Text, Integer]);
    }

    #[test]
    fn hostile_mix_produces_every_kind_of_character() {
        let generator = RowGenerator::new(4, 4_000, 1, TextMix::HOSTILE);
        let text: String = (0..20)
            .flat_map(|i| generator.row(i))
            .filter_map(|v| {
                if let Value::Text(s) = v {
                    Some(s)
                } else {
                    None
                }
            })
            .collect();
        for c in ['\'', '\\', '\n', '\0', 'é', '日', '🦀'] {
            assert!(text.contains(c), "no {c:?} in hostile text");
        }
    }

    #[test]
    fn plain_mix_is_alphanumeric_and_integers_are_js_safe() {
        let generator = RowGenerator::new(9, 500, 3, TextMix::default());
        for i in 0..50 {
            for v in generator.row(i) {
                match v {
                    Value::Text(s) => assert!(s.bytes().all(|b| b.is_ascii_alphanumeric())),
                    Value::Integer(n) => assert!(n.abs() <= MAX_SAFE_INTEGER),
                }
            }
        }
    }

    #[test]
    fn every_generated_byte_is_in_the_alphabet() {
        let alphabet = text_alphabet();
        assert!(alphabet.windows(2).all(|w| w[0] < w[1]), "sorted, unique");
        let generator = RowGenerator::new(5, 3_000, 4, TextMix::HOSTILE);
        let plain = RowGenerator::new(5, 3_000, 4, TextMix::default());
        for i in 0..30 {
            for v in generator.row(i).into_iter().chain(plain.row(i)) {
                if let Value::Text(s) = v {
                    for b in s.bytes() {
                        assert!(alphabet.binary_search(&b).is_ok(), "byte {b:#04x} missing");
                    }
                }
            }
        }
    }

    /// FNV-1a over every value of rows `0..rows`: a type tag, then the integer's bytes or the
    /// text's length and bytes, so a change of any value, type or boundary moves it.
    fn digest(generator: &RowGenerator, rows: u64) -> u64 {
        let mut hash: u64 = 0xCBF2_9CE4_8422_2325;
        let mut eat = |bytes: &[u8]| {
            for &b in bytes {
                hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01B3);
            }
        };
        for i in 0..rows {
            for value in generator.row(i) {
                match value {
                    Value::Integer(n) => {
                        eat(b"i");
                        eat(&n.to_le_bytes());
                    }
                    Value::Text(s) => {
                        eat(b"t");
                        eat(&(s.len() as u64).to_le_bytes());
                        eat(s.as_bytes());
                    }
                }
            }
        }
        hash
    }

    /// The rows of a seed are part of every recorded run: its checksums, and the rows a replay
    /// reconciles against. These digests were taken from the generator as it stood before it was
    /// made faster (one draw per character, pushed one at a time), so any change to what it
    /// generates for these shapes, seeds and mixes fails here. Escaping values held NUL then:
    /// the digests marked `escaping` were taken from those rows with every NUL replaced by a
    /// quote, which is what escaping values are since NUL has a share of its own. The `nul`
    /// digests were taken when it got it.
    #[test]
    fn the_same_rows_as_the_generator_always_made() {
        let mix = |escape_share, nul_share, non_ascii_share| TextMix {
            escape_share,
            nul_share,
            non_ascii_share,
        };
        let plain = TextMix::default();
        let cases: [(usize, usize, u64, TextMix, u64, u64); 15] = [
            (1, 7, 1, plain, 50, 0xa78e_f448_325b_4843),
            (8, 1_000, 1, plain, 20, 0x717e_fec8_b136_c556),
            (64, 1_000, 1, plain, 20, 0x0a70_9ef9_2358_e8d8),
            (8, 1_000, 1, mix(0.0, 0.0, 0.5), 20, 0xf167_d5f4_6d0c_ac19),
            (2, 5, 0, mix(0.0, 0.0, 1.0), 200, 0x46a3_b71e_1549_72b7),
            // No value of these 9 escapes: the same digest with NUL or without.
            (4, 100_000, 1, mix(0.1, 0.0, 0.0), 3, 0x25bc_ba76_440f_e4b0),
            // escaping
            (8, 1_000, 42, mix(1.0, 0.0, 1.0), 20, 0xe18b_dbb0_a89a_b72b),
            (64, 1_000, 7, mix(1.0, 0.0, 1.0), 20, 0x1efa_bcc7_00ac_e657),
            (8, 1_000, 1, mix(0.5, 0.0, 0.0), 20, 0x3e4f_a311_5ceb_461d),
            (8, 1_000, 3, mix(0.25, 0.0, 0.75), 20, 0x8cad_7d08_5ad5_b623),
            (
                3,
                31,
                u64::MAX,
                mix(1.0, 0.0, 1.0),
                100,
                0x5a34_79a3_942c_c68b,
            ),
            (100, 1_000, 9, mix(1.0, 0.0, 0.0), 10, 0x9e55_c4ee_9727_4a52),
            // nul
            (8, 1_000, 42, TextMix::HOSTILE, 20, 0x0816_9d9a_6075_b4c2),
            (8, 1_000, 1, mix(0.0, 0.5, 0.0), 20, 0x0d7a_d772_cd8c_a3b1),
            (
                3,
                31,
                u64::MAX,
                TextMix::HOSTILE,
                100,
                0x1097_8ea6_4c64_9f45,
            ),
        ];
        let mut wrong = Vec::new();
        for (columns, row_bytes, seed, text, rows, want) in cases {
            let got = digest(&RowGenerator::new(columns, row_bytes, seed, text), rows);
            if got != want {
                wrong.push(format!(
                    "C={columns} bytes={row_bytes} seed={seed} {text:?} rows={rows}: {got:#018x}"
                ));
            }
        }
        assert!(wrong.is_empty(), "rows changed:\n{}", wrong.join("\n"));
    }

    /// The texts of rows `0..rows`.
    fn texts(generator: &RowGenerator, rows: u64) -> Vec<String> {
        (0..rows)
            .flat_map(|i| generator.row(i))
            .filter_map(|v| match v {
                Value::Text(s) => Some(s),
                Value::Integer(_) => None,
            })
            .collect()
    }

    #[test]
    fn shares_are_respected_roughly() {
        let mix = TextMix {
            escape_share: 0.5,
            ..TextMix::default()
        };
        let escaping = texts(&RowGenerator::new(2, 200, 11, mix), 1_000);
        let escaped = escaping.iter().filter(|s| s.contains(NEEDS_ESCAPE)).count();
        // 2,000 values at p = 0.5: far outside 800..1200 would mean the share is ignored.
        assert!((800..1_200).contains(&escaped), "{escaped} of 2000 escaped");
        assert!(
            escaping.iter().all(|s| !s.contains('\0')),
            "escapes hold no NUL"
        );
        let mix = TextMix {
            nul_share: 0.25,
            ..TextMix::default()
        };
        let nul = texts(&RowGenerator::new(2, 200, 11, mix), 1_000);
        let with_nul: Vec<&String> = nul.iter().filter(|s| s.contains('\0')).collect();
        assert!(
            (400..600).contains(&with_nul.len()),
            "{} of 2000",
            with_nul.len()
        );
        // One NUL, first; the rest plain.
        for s in with_nul {
            assert!(s.starts_with('\0') && s[1..].bytes().all(|b| b.is_ascii_alphanumeric()));
        }
    }

    #[test]
    fn escaping_and_nul_are_drawn_apart_and_nul_alone_leaves_the_other_draws_alone() {
        let escape = TextMix {
            escape_share: 1.0,
            ..TextMix::default()
        };
        let both = TextMix {
            nul_share: 1.0,
            ..escape
        };
        let generator = RowGenerator::new(4, 400, 3, both);
        for s in texts(&generator, 50) {
            // NUL first, then an escaping character.
            let mut chars = s.chars();
            assert_eq!(chars.next(), Some('\0'), "{s:?}");
            assert!(NEEDS_ESCAPE.contains(&chars.next().unwrap()), "{s:?}");
        }
        // A share of 0 draws nothing: the rows are those of a mix without NUL at all.
        let none = TextMix {
            nul_share: 0.0,
            ..escape
        };
        assert_eq!(
            RowGenerator::new(4, 400, 3, none).row(7),
            RowGenerator::new(4, 400, 3, escape).row(7)
        );
    }
}
