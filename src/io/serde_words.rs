//! serde's error messages in the words of someone who writes a config, not Rust:
//! `invalid type: string "abc", expected usize` becomes `expected a whole number ≥ 0, got
//! the string "abc"`; Rust type names (`usize`, `f64`, `struct OutputSpec`, `a sequence`)
//! become what they mean in TOML.

/// `message` (one line of a serde error) with its Rust type names in TOML words, and
/// `invalid type/value: X, expected Y` turned into `expected Y, got X`.
pub fn in_user_words(message: &str) -> String {
    for prefix in ["invalid type: ", "invalid value: "] {
        if let Some(rest) = message.strip_prefix(prefix)
            && let Some((found, expected)) = rest.rsplit_once(", expected ")
        {
            return format!(
                "expected {}, got {}",
                expected_in_words(expected),
                found_in_words(found)
            );
        }
    }
    if let Some(rest) = message.strip_prefix("invalid length ")
        && let Some((length, expected)) = rest.split_once(", expected ")
    {
        return format!(
            "expected {}, got {length} value(s)",
            expected_in_words(expected)
        );
    }
    if message.starts_with("data did not match any variant of untagged enum") {
        return "matches none of the forms this key accepts".into();
    }
    match message.split_once(", expected ") {
        // `unknown field `x`, expected one of …`, `unknown variant …`: the list is in words.
        Some((head, expected)) => format!("{head}, expected {}", expected_in_words(expected)),
        None => message.to_string(),
    }
}

/// What serde's `expected …` names, in TOML words.
fn expected_in_words(expected: &str) -> String {
    let words = match expected {
        "usize" | "u64" | "u32" | "u16" | "u8" | "u128" => "a whole number ≥ 0",
        "isize" | "i64" | "i32" | "i16" | "i8" | "i128" => "a whole number",
        "f64" | "f32" => "a number",
        "a sequence" => "a list [ … ]",
        "a map" => "a table { … }",
        "a boolean" => "true or false",
        "a string" | "string only" | "variant identifier" => "a string",
        "a nonzero usize" | "a nonzero u64" | "a nonzero u32" => "a whole number ≥ 1",
        "option" => "a value",
        _ => {
            if expected.starts_with("struct ") {
                "a table { … }"
            } else if expected.starts_with("internally tagged enum ") {
                "a table with a `kind`"
            } else if expected.starts_with("enum ") {
                "one of its names, as a string"
            } else if let Some(size) = expected
                .strip_prefix("a tuple of size ")
                .or_else(|| expected.strip_prefix("an array of length "))
            {
                return format!("a list of {size} values");
            } else {
                return expected.to_string();
            }
        }
    };
    words.to_string()
}

/// What serde's `invalid type: …` found, in TOML words.
fn found_in_words(found: &str) -> String {
    let quoted = |prefix: &str| {
        found
            .strip_prefix(prefix)
            .and_then(|rest| rest.strip_prefix('`'))
            .and_then(|rest| rest.strip_suffix('`'))
            .map(str::to_string)
    };
    if let Some(value) = quoted("integer ").or_else(|| quoted("floating point ")) {
        return value;
    }
    if let Some(value) = quoted("boolean ") {
        return value;
    }
    if let Some(text) = found.strip_prefix("string ") {
        return format!("the string {text}");
    }
    match found {
        "sequence" => "a list".into(),
        "map" => "a table".into(),
        "unit variant" | "enum" => "a value of another type".into(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::in_user_words;

    /// The messages serde and toml give for bad config values (taken from harbor's own
    /// errors), in words.
    #[test]
    fn rust_type_names_become_toml_words() {
        for (serde, words) in [
            (
                "invalid type: string \"abc\", expected usize",
                "expected a whole number ≥ 0, got the string \"abc\"",
            ),
            (
                "invalid value: integer `-3`, expected usize",
                "expected a whole number ≥ 0, got -3",
            ),
            (
                "invalid type: floating point `1.5`, expected u64",
                "expected a whole number ≥ 0, got 1.5",
            ),
            (
                "invalid type: string \"a\", expected f64",
                "expected a number, got the string \"a\"",
            ),
            (
                "invalid type: boolean `true`, expected f64",
                "expected a number, got true",
            ),
            (
                "invalid type: integer `3`, expected a sequence",
                "expected a list [ … ], got 3",
            ),
            (
                "invalid type: map, expected a sequence",
                "expected a list [ … ], got a table",
            ),
            (
                "invalid type: sequence, expected usize",
                "expected a whole number ≥ 0, got a list",
            ),
            (
                "invalid type: integer `3`, expected struct OutputSpec",
                "expected a table { … }, got 3",
            ),
            (
                "invalid type: integer `3`, expected internally tagged enum SignalSpec",
                "expected a table with a `kind`, got 3",
            ),
            (
                "invalid type: integer `3`, expected variant identifier",
                "expected a string, got 3",
            ),
            (
                "invalid type: integer `3`, expected a boolean",
                "expected true or false, got 3",
            ),
            (
                "data did not match any variant of untagged enum NoiseSpec",
                "matches none of the forms this key accepts",
            ),
            (
                "unknown field `hh`, expected one of `family`, `stages`",
                "unknown field `hh`, expected one of `family`, `stages`",
            ),
            ("missing field `sigma`", "missing field `sigma`"),
        ] {
            assert_eq!(in_user_words(serde), words, "{serde}");
        }
    }
}
