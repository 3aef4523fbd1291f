//! The error of reading an expression: what went wrong, and where in the user's text.

/// What kind of mistake an [`ExprError`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExprErrorKind {
    /// The text is empty or only white space.
    Empty,
    /// A character that starts no token (`#`, `;`, `é`, …).
    UnexpectedCharacter,
    /// A number that does not parse (`1e`, `2.5e+`) or is not finite (`1e400`).
    BadNumber,
    /// A name that is not one of the variables.
    UnknownName,
    /// A call of a function that is not one of [`Func::ALL`](super::Func::ALL).
    UnknownFunction,
    /// A function name without its parenthesised argument, a variable called like a
    /// function, or a call with more than one argument.
    BadCall,
    /// An operator, `(` or a function call without the operand it needs (`2 +`, `()`).
    MissingOperand,
    /// A `(` never closed, or a `)` never opened.
    UnbalancedParentheses,
    /// Text after a complete expression (`2 x`, `(q) p`).
    TrailingInput,
    /// Parentheses, signs or exponents nested deeper than the parser's limit.
    TooDeep,
}

/// An expression the parser could not read: the kind of mistake, the 0-based position in
/// the text counted in characters (not bytes; the length of the text for "at the end"),
/// and a message that names what was found and, where it helps, what would be accepted.
///
/// Displayed as `<message> at <position>[; <hint>]`, e.g.
/// `unknown name "mm" at 7; the names are q, p, m, l, g, c`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} at {position}{}", hint_suffix(.hint))]
pub struct ExprError {
    pub kind: ExprErrorKind,
    /// 0-based character position of the mistake in the parsed text.
    pub position: usize,
    /// What was found, e.g. `unknown name "mm"`.
    pub message: String,
    /// What would have been accepted, e.g. `the names are q, p`, if anything helps.
    pub hint: Option<String>,
}

fn hint_suffix(hint: &Option<String>) -> String {
    hint.as_ref().map(|h| format!("; {h}")).unwrap_or_default()
}

impl ExprError {
    pub(crate) fn new(kind: ExprErrorKind, position: usize, message: impl Into<String>) -> Self {
        ExprError {
            kind,
            position,
            message: message.into(),
            hint: None,
        }
    }

    pub(crate) fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}
