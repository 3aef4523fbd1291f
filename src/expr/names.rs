//! The names a user gives the variables of a model (states, coordinates, parameters): what
//! the parser can read as a name.

use crate::error::{Error, Result};

/// Checks that `name` is a variable name the grammar reads — ASCII letters, digits and `_`,
/// not starting with a digit — and not a function's name; errors name `field`.
pub fn check_variable_name(field: &str, name: &str) -> Result<()> {
    let valid = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return Err(Error::invalid(
            field,
            format!(
                "{name:?} is not a name: use ASCII letters, digits and _, not starting with a digit"
            ),
        ));
    }
    if super::Func::from_name(name).is_some() {
        return Err(Error::invalid(
            field,
            format!("{name:?} is a function's name; choose another"),
        ));
    }
    Ok(())
}
