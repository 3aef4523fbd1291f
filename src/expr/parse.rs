//! The parser: an expression string into pool nodes, or an error that points into it.

use super::error::{ExprError, ExprErrorKind};
use super::functions::Func;
use super::pool::{ExprPool, Id};

/// The deepest nesting of signs, parentheses and exponents the parser follows.
pub const MAX_DEPTH: usize = 200;

/// Parses `text` into `pool`; variable i is called `names[i]` (the first of equal
/// names wins).
///
/// Grammar (white space between tokens is ignored):
///
/// ```text
/// expr   = term { ("+" | "-") term }            left-associative
/// term   = unary { ("*" | "/") unary }          left-associative
/// unary  = ("-" | "+") unary | power
/// power  = atom [ "^" unary ]                   right-associative, binds tighter than
///                                               a sign on its left: -x^2 = -(x^2)
/// atom   = number | name | function "(" expr ")" | "(" expr ")"
/// number = digits ["." [digits]] [exponent] | "." digits [exponent]
/// exponent = ("e" | "E") ["+" | "-"] digits
/// name   = (letter | "_") { letter | digit | "_" }     ASCII letters and digits
/// ```
///
/// so `2^3^2` = 2⁹ and `2^-1` = ½. A name followed by `(` is a call of one of
/// [`Func::ALL`]; any other name is looked up in the variable names. Every mistake is an
/// [`ExprError`] with the character position where it is seen; nothing panics, and the
/// nesting depth is limited ([`MAX_DEPTH`]) so no input exhausts the stack.
pub fn parse(pool: &mut ExprPool, text: &str, names: &[&str]) -> Result<Id, ExprError> {
    let chars: Vec<char> = text.chars().collect();
    let tokens = lex(&chars);
    if matches!(tokens[0].kind, Tok::End) {
        return Err(ExprError::new(ExprErrorKind::Empty, 0, "empty expression"));
    }
    let mut parser = Parser {
        tokens,
        next: 0,
        pool,
        names,
        depth: 0,
    };
    let id = parser.expr()?;
    let token = parser.peek()?;
    match token.kind {
        Tok::End => Ok(id),
        Tok::RParen => Err(ExprError::new(
            ExprErrorKind::UnbalancedParentheses,
            token.position,
            "unmatched \")\"",
        )),
        _ => Err(ExprError::new(
            ExprErrorKind::TrailingInput,
            token.position,
            format!(
                "unexpected {} after a complete expression",
                token.describe()
            ),
        )
        .with_hint("expected an operator or the end")),
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Number(f64),
    Name,
    Plus,
    Minus,
    Star,
    Slash,
    Caret,
    LParen,
    RParen,
    Comma,
    End,
    /// A lexical error, reported when the parser reaches it (so errors come in text order).
    Bad(ExprError),
}

#[derive(Debug, Clone)]
struct Token {
    kind: Tok,
    /// Character position of the first character.
    position: usize,
    text: String,
}

impl Token {
    /// The token as error messages name it.
    fn describe(&self) -> String {
        match self.kind {
            Tok::Number(_) => format!("number \"{}\"", self.text),
            Tok::Name => format!("name \"{}\"", self.text),
            Tok::End => "the end".into(),
            _ => format!("\"{}\"", self.text),
        }
    }
}

/// The tokens of `chars`, ending with `End` or with the first lexical error.
fn lex(chars: &[char]) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut i = 0;
    let text = |from: usize, to: usize| chars[from..to].iter().collect::<String>();
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        let single = match c {
            '+' => Some(Tok::Plus),
            '-' => Some(Tok::Minus),
            '*' => Some(Tok::Star),
            '/' => Some(Tok::Slash),
            '^' => Some(Tok::Caret),
            '(' => Some(Tok::LParen),
            ')' => Some(Tok::RParen),
            ',' => Some(Tok::Comma),
            _ => None,
        };
        let digit_at = |j: usize| chars.get(j).is_some_and(char::is_ascii_digit);
        let kind = if let Some(kind) = single {
            i += 1;
            kind
        } else if c.is_ascii_alphabetic() || c == '_' {
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            Tok::Name
        } else if c.is_ascii_digit() || (c == '.' && digit_at(i + 1)) {
            while digit_at(i) {
                i += 1;
            }
            if chars.get(i) == Some(&'.') {
                i += 1;
                while digit_at(i) {
                    i += 1;
                }
            }
            let mut malformed = false;
            if matches!(chars.get(i), Some('e' | 'E')) {
                i += 1;
                if matches!(chars.get(i), Some('+' | '-')) {
                    i += 1;
                }
                malformed = !digit_at(i);
                while digit_at(i) {
                    i += 1;
                }
            }
            let literal = text(start, i);
            match literal.parse::<f64>() {
                Ok(v) if !malformed && v.is_finite() => Tok::Number(v),
                Ok(v) if !malformed => Tok::Bad(ExprError::new(
                    ExprErrorKind::BadNumber,
                    start,
                    format!("number \"{literal}\" is not finite ({v})"),
                )),
                _ => Tok::Bad(
                    ExprError::new(
                        ExprErrorKind::BadNumber,
                        start,
                        format!("malformed number \"{literal}\""),
                    )
                    .with_hint("an exponent needs digits, as in 1e-3"),
                ),
            }
        } else {
            Tok::Bad(ExprError::new(
                ExprErrorKind::UnexpectedCharacter,
                start,
                format!("unexpected character \"{c}\""),
            ))
        };
        let bad = matches!(kind, Tok::Bad(_));
        tokens.push(Token {
            kind,
            position: start,
            text: text(start, i.max(start + 1)),
        });
        if bad {
            return tokens;
        }
    }
    tokens.push(Token {
        kind: Tok::End,
        position: chars.len(),
        text: String::new(),
    });
    tokens
}

struct Parser<'a> {
    tokens: Vec<Token>,
    next: usize,
    pool: &'a mut ExprPool,
    names: &'a [&'a str],
    depth: usize,
}

impl Parser<'_> {
    /// The next token; a lexical error is returned as the error it is.
    fn peek(&self) -> Result<Token, ExprError> {
        let token = &self.tokens[self.next];
        match &token.kind {
            Tok::Bad(e) => Err(e.clone()),
            _ => Ok(token.clone()),
        }
    }

    fn advance(&mut self) {
        self.next += 1;
    }

    fn expr(&mut self) -> Result<Id, ExprError> {
        let mut lhs = self.term()?;
        loop {
            match self.peek()?.kind {
                Tok::Plus => {
                    self.advance();
                    let rhs = self.term()?;
                    lhs = self.pool.add(lhs, rhs);
                }
                Tok::Minus => {
                    self.advance();
                    let rhs = self.term()?;
                    lhs = self.pool.sub(lhs, rhs);
                }
                _ => return Ok(lhs),
            }
        }
    }

    fn term(&mut self) -> Result<Id, ExprError> {
        let mut lhs = self.unary()?;
        loop {
            match self.peek()?.kind {
                Tok::Star => {
                    self.advance();
                    let rhs = self.unary()?;
                    lhs = self.pool.mul(lhs, rhs);
                }
                Tok::Slash => {
                    self.advance();
                    let rhs = self.unary()?;
                    lhs = self.pool.div(lhs, rhs);
                }
                _ => return Ok(lhs),
            }
        }
    }

    /// Every recursion passes through here, so the depth is counted here.
    fn unary(&mut self) -> Result<Id, ExprError> {
        let token = self.peek()?;
        if self.depth >= MAX_DEPTH {
            return Err(ExprError::new(
                ExprErrorKind::TooDeep,
                token.position,
                format!("expression nested deeper than {MAX_DEPTH} levels"),
            ));
        }
        self.depth += 1;
        let result = match token.kind {
            Tok::Minus => {
                self.advance();
                self.unary().map(|x| self.pool.neg(x))
            }
            Tok::Plus => {
                self.advance();
                self.unary()
            }
            _ => self.power(),
        };
        self.depth -= 1;
        result
    }

    fn power(&mut self) -> Result<Id, ExprError> {
        let base = self.atom()?;
        if self.peek()?.kind == Tok::Caret {
            self.advance();
            let exponent = self.unary()?;
            return Ok(self.pool.pow(base, exponent));
        }
        Ok(base)
    }

    fn atom(&mut self) -> Result<Id, ExprError> {
        let token = self.peek()?;
        match token.kind {
            Tok::Number(v) => {
                self.advance();
                Ok(self.pool.constant(v))
            }
            Tok::Name => {
                self.advance();
                self.name(&token)
            }
            Tok::LParen => {
                self.advance();
                let inner = self.expr()?;
                self.close(&token)?;
                Ok(inner)
            }
            _ => Err(self.missing_operand(&token)),
        }
    }

    /// A variable, or a call if the name is followed by "(".
    fn name(&mut self, token: &Token) -> Result<Id, ExprError> {
        let name = token.text.as_str();
        let variable = self.names.iter().position(|n| *n == name);
        let open = self.peek()?;
        if open.kind != Tok::LParen {
            if let Some(i) = variable {
                return Ok(self.pool.var(i));
            }
            if Func::from_name(name).is_some() {
                return Err(ExprError::new(
                    ExprErrorKind::BadCall,
                    open.position,
                    format!("function \"{name}\" needs its argument in parentheses"),
                )
                .with_hint(format!("write {name}(…)")));
            }
            let hint = if self.names.is_empty() {
                "there are no names".to_string()
            } else {
                format!("the names are {}", self.names.join(", "))
            };
            return Err(ExprError::new(
                ExprErrorKind::UnknownName,
                token.position,
                format!("unknown name \"{name}\""),
            )
            .with_hint(hint));
        }
        let Some(f) = Func::from_name(name) else {
            if variable.is_some() {
                return Err(ExprError::new(
                    ExprErrorKind::BadCall,
                    open.position,
                    format!("variable \"{name}\" is not a function"),
                )
                .with_hint(format!("write {name}*(…) for a product")));
            }
            let functions: Vec<&str> = Func::ALL.iter().map(|f| f.name()).collect();
            return Err(ExprError::new(
                ExprErrorKind::UnknownFunction,
                token.position,
                format!("unknown function \"{name}\""),
            )
            .with_hint(format!("the functions are {}", functions.join(", "))));
        };
        self.advance();
        let argument = self.expr()?;
        if self.peek()?.kind == Tok::Comma {
            return Err(ExprError::new(
                ExprErrorKind::BadCall,
                self.peek()?.position,
                format!("function \"{name}\" takes one argument"),
            ));
        }
        self.close(&open)?;
        Ok(self.pool.call(f, argument))
    }

    /// Consumes the ")" that closes `open`.
    fn close(&mut self, open: &Token) -> Result<(), ExprError> {
        let token = self.peek()?;
        match token.kind {
            Tok::RParen => {
                self.advance();
                Ok(())
            }
            Tok::End => Err(ExprError::new(
                ExprErrorKind::UnbalancedParentheses,
                open.position,
                "unclosed \"(\"",
            )
            .with_hint(format!(
                "the text ends at {} without its \")\"",
                token.position
            ))),
            _ => Err(ExprError::new(
                ExprErrorKind::TrailingInput,
                token.position,
                format!("unexpected {} inside parentheses", token.describe()),
            )
            .with_hint(format!(
                "expected an operator or the \")\" closing the \"(\" at {}",
                open.position
            ))),
        }
    }

    /// The error for `found` where an operand should start.
    fn missing_operand(&self, found: &Token) -> ExprError {
        let after = match self.next.checked_sub(1) {
            Some(previous) => format!(" after \"{}\"", self.tokens[previous].text),
            None => String::new(),
        };
        let found = match found.kind {
            Tok::End => "the text ends there".to_string(),
            _ => format!("found {}", found.describe()),
        };
        ExprError::new(
            ExprErrorKind::MissingOperand,
            self.tokens[self.next].position,
            format!("missing operand{after}"),
        )
        .with_hint(found)
    }
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
