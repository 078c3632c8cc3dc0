//! Types kept on disk as the text people read: [`serde_as_text!`] gives a type with `Display`
//! and `FromStr` the `Serialize` and `Deserialize` that write and read exactly that text, so a
//! CSV or TOML file holds the same words as before the type was an enum.

/// `Serialize` through `Display`, `Deserialize` through `FromStr` (its error, a `String`, names
/// what was wrong).
macro_rules! serde_as_text {
    ($type:ty) => {
        impl serde::Serialize for $type {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_str(self)
            }
        }

        impl<'de> serde::Deserialize<'de> for $type {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let text = String::deserialize(deserializer)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

pub(crate) use serde_as_text;

/// `text` as one shell word: as it is when it needs no quotes, else in single quotes.
pub fn shell_word(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "=,._-+/:".contains(c));
    if plain {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}
