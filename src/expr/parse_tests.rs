//! The parser's tests: values, precedence and every error kind with its position.

use super::*;
use crate::expr::functions::pow;

fn value(text: &str, names: &[&str], vars: &[f64]) -> f64 {
    let mut pool = ExprPool::new();
    let id = parse(&mut pool, text, names).unwrap_or_else(|e| panic!("{text}: {e}"));
    pool.eval(id, vars)
}

fn error(text: &str, names: &[&str]) -> ExprError {
    let mut pool = ExprPool::new();
    match parse(&mut pool, text, names) {
        Ok(_) => panic!("{text} parsed"),
        Err(e) => e,
    }
}

#[test]
fn numbers() {
    for (text, want) in [
        ("2", 2.0),
        ("0.5", 0.5),
        (".5", 0.5),
        ("2.", 2.0),
        ("1e-3", 1e-3),
        ("2.5E+4", 2.5e4),
        ("1e400", f64::NAN),
    ] {
        if want.is_nan() {
            assert_eq!(error(text, &[]).kind, ExprErrorKind::BadNumber);
        } else {
            assert_eq!(value(text, &[], &[]), want, "{text}");
        }
    }
}

#[test]
fn precedence_and_associativity() {
    let names = ["x", "y"];
    let at = [3.0, 2.0];
    for (text, want) in [
        ("2^3^2", 512.0),
        ("(2^3)^2", 64.0),
        ("-x^2", -9.0),
        ("(-x)^2", 9.0),
        ("2^-1", 0.5),
        ("-2^-2", -0.25),
        ("1 - 2 - 3", -4.0),
        ("8 / 4 / 2", 1.0),
        ("2 + 3 * 4", 14.0),
        ("2 * 3 ^ 2", 18.0),
        ("x - -y", 5.0),
        ("+x * -y", -6.0),
        ("--x", 3.0),
        ("x / y * 4", 6.0),
        ("2 * x^y^0.5 ", 2.0 * pow(3.0, pow(2.0, 0.5))),
        ("((x))", 3.0),
        ("abs(-x) + sqrt(y*8)", 7.0),
    ] {
        assert_eq!(value(text, &names, &at), want, "{text}");
    }
}

/// Every kind of error, with its position and its message as displayed.
#[test]
fn errors_point_into_the_text() {
    let names = ["q", "p", "m", "l", "g", "c"];
    for (text, kind, position, display) in [
        ("", ExprErrorKind::Empty, 0, "empty expression at 0"),
        ("  \t", ExprErrorKind::Empty, 0, "empty expression at 0"),
        (
            "q + p*mm",
            ExprErrorKind::UnknownName,
            6,
            "unknown name \"mm\" at 6; the names are q, p, m, l, g, c",
        ),
        (
            "sine(q)",
            ExprErrorKind::UnknownFunction,
            0,
            "unknown function \"sine\" at 0; the functions are sin, cos, tan, exp, \
             log, sqrt, tanh, sinh, cosh, atan, abs",
        ),
        (
            "2*sin q",
            ExprErrorKind::BadCall,
            6,
            "function \"sin\" needs its argument in parentheses at 6; write sin(…)",
        ),
        (
            "q(p)",
            ExprErrorKind::BadCall,
            1,
            "variable \"q\" is not a function at 1; write q*(…) for a product",
        ),
        (
            "atan(q, p)",
            ExprErrorKind::BadCall,
            6,
            "function \"atan\" takes one argument at 6",
        ),
        (
            "(q + p",
            ExprErrorKind::UnbalancedParentheses,
            0,
            "unclosed \"(\" at 0; the text ends at 6 without its \")\"",
        ),
        (
            "cos((q)",
            ExprErrorKind::UnbalancedParentheses,
            3,
            "unclosed \"(\" at 3; the text ends at 7 without its \")\"",
        ),
        (
            "q + p)",
            ExprErrorKind::UnbalancedParentheses,
            5,
            "unmatched \")\" at 5",
        ),
        (
            "2 q",
            ExprErrorKind::TrailingInput,
            2,
            "unexpected name \"q\" after a complete expression at 2; \
             expected an operator or the end",
        ),
        (
            "(q p)",
            ExprErrorKind::TrailingInput,
            3,
            "unexpected name \"p\" inside parentheses at 3; \
             expected an operator or the \")\" closing the \"(\" at 0",
        ),
        (
            "q +",
            ExprErrorKind::MissingOperand,
            3,
            "missing operand after \"+\" at 3; the text ends there",
        ),
        (
            "q * / p",
            ExprErrorKind::MissingOperand,
            4,
            "missing operand after \"*\" at 4; found \"/\"",
        ),
        (
            "sin()",
            ExprErrorKind::MissingOperand,
            4,
            "missing operand after \"(\" at 4; found \")\"",
        ),
        (
            "*q",
            ExprErrorKind::MissingOperand,
            0,
            "missing operand at 0; found \"*\"",
        ),
        (
            "q^1e",
            ExprErrorKind::BadNumber,
            2,
            "malformed number \"1e\" at 2; an exponent needs digits, as in 1e-3",
        ),
        (
            "q + 2.5e+",
            ExprErrorKind::BadNumber,
            4,
            "malformed number \"2.5e+\" at 4; an exponent needs digits, as in 1e-3",
        ),
        (
            "1e400 * q",
            ExprErrorKind::BadNumber,
            0,
            "number \"1e400\" is not finite (inf) at 0",
        ),
        (
            "q # p",
            ExprErrorKind::UnexpectedCharacter,
            2,
            "unexpected character \"#\" at 2",
        ),
        // Positions count characters, not bytes.
        (
            "θ+q",
            ExprErrorKind::UnexpectedCharacter,
            0,
            "unexpected character \"θ\" at 0",
        ),
        (
            "1 + ° ",
            ExprErrorKind::UnexpectedCharacter,
            4,
            "unexpected character \"°\" at 4",
        ),
        (
            "p/ (q·p)",
            ExprErrorKind::UnexpectedCharacter,
            5,
            "unexpected character \"·\" at 5",
        ),
        (
            "x",
            ExprErrorKind::UnknownName,
            0,
            "unknown name \"x\" at 0; the names are q, p, m, l, g, c",
        ),
    ] {
        let e = error(text, &names);
        assert_eq!(
            (e.kind, e.position, e.to_string().as_str()),
            (kind, position, display),
            "{text:?}"
        );
    }
    assert_eq!(
        error("x", &[]).to_string(),
        "unknown name \"x\" at 0; there are no names"
    );
}

/// The brief's example: the position of "mm" in "m*g*l*(mm + q)" is 7.
#[test]
fn unknown_name_example() {
    let e = error("m*g*l*(mm + q)", &["q", "p", "m", "l", "g", "c"]);
    assert_eq!(
        e.to_string(),
        "unknown name \"mm\" at 7; the names are q, p, m, l, g, c"
    );
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    for text in [
        format!("{}x{}", "(".repeat(100_000), ")".repeat(100_000)),
        format!("{}x", "-".repeat(100_000)),
        format!("x{}", "^x".repeat(100_000)),
        format!("{}x{}", "sin(".repeat(100_000), ")".repeat(100_000)),
    ] {
        assert_eq!(error(&text, &["x"]).kind, ExprErrorKind::TooDeep);
    }
    // Nesting within the limit is fine.
    let text = format!("{}x{}", "(".repeat(150), ")".repeat(150));
    assert_eq!(value(&text, &["x"], &[2.0]), 2.0);
    // A long flat sum is not nested at all.
    let text = vec!["x"; 100_000].join(" + ");
    assert_eq!(value(&text, &["x"], &[1.0]), 100_000.0);
}
