//! An Analysis task's `successCondition`: the subset of Argo Rollouts' expressions a gate on
//! one Prometheus value needs — comparisons of `result` (or `result[0]`, the same value) with
//! a number, joined by `&&` / `||` (`and` / `or`), `&&` binding tighter, with parentheses.
//! Parsed once at validation so a bad condition is refused with the manifest, then evaluated in
//! the fold: IEEE comparisons are deterministic, and `NaN` compares false as in Go.

/// A parsed success condition.
#[derive(Debug, Clone, PartialEq)]
pub struct SuccessCondition(Expr);

#[derive(Debug, Clone, PartialEq)]
enum Expr {
    Compare(Operand, Op, Operand),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Operand {
    Result,
    Number(f64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Less,
    LessEqual,
    Greater,
    GreaterEqual,
    Equal,
    NotEqual,
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Result,
    Number(f64),
    Op(Op),
    And,
    Or,
    Open,
    Close,
}

impl SuccessCondition {
    /// Parses a condition such as `result < 0.01` or `result[0] >= 0.95 && result <= 1`.
    ///
    /// # Errors
    /// What is wrong and where, in words.
    pub fn parse(text: &str) -> Result<Self, String> {
        let tokens = tokenize(text)?;
        let mut parser = Parser { tokens, at: 0 };
        let expr = parser.or()?;
        if parser.at != parser.tokens.len() {
            return Err(format!("unexpected text after position {}", parser.at));
        }
        Ok(Self(expr))
    }

    /// Whether `value` (the query's result) satisfies the condition.
    #[must_use]
    pub fn holds(&self, value: f64) -> bool {
        self.0.holds(value)
    }
}

impl Expr {
    fn holds(&self, value: f64) -> bool {
        match self {
            Expr::Compare(left, op, right) => op.holds(left.of(value), right.of(value)),
            Expr::And(a, b) => a.holds(value) && b.holds(value),
            Expr::Or(a, b) => a.holds(value) || b.holds(value),
        }
    }
}

impl Operand {
    fn of(self, value: f64) -> f64 {
        match self {
            Operand::Result => value,
            Operand::Number(n) => n,
        }
    }
}

impl Op {
    fn holds(self, left: f64, right: f64) -> bool {
        match self {
            Op::Less => left < right,
            Op::LessEqual => left <= right,
            Op::Greater => left > right,
            Op::GreaterEqual => left >= right,
            Op::Equal => left == right,
            Op::NotEqual => left != right,
        }
    }
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

impl Parser {
    fn next(&mut self) -> Option<Token> {
        let token = self.tokens.get(self.at).cloned();
        self.at += usize::from(token.is_some());
        token
    }

    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn or(&mut self) -> Result<Expr, String> {
        let mut left = self.and()?;
        while self.peek() == Some(&Token::Or) {
            self.at += 1;
            left = Expr::Or(Box::new(left), Box::new(self.and()?));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Expr, String> {
        let mut left = self.primary()?;
        while self.peek() == Some(&Token::And) {
            self.at += 1;
            left = Expr::And(Box::new(left), Box::new(self.primary()?));
        }
        Ok(left)
    }

    fn primary(&mut self) -> Result<Expr, String> {
        if self.peek() == Some(&Token::Open) {
            self.at += 1;
            let inner = self.or()?;
            return match self.next() {
                Some(Token::Close) => Ok(inner),
                _ => Err("a \"(\" is not closed".into()),
            };
        }
        let left = self.operand()?;
        let Some(Token::Op(op)) = self.next() else {
            return Err("expected a comparison (<, <=, >, >=, ==, !=) after an operand".into());
        };
        let right = self.operand()?;
        if !matches!(
            (left, right),
            (Operand::Result, Operand::Number(_)) | (Operand::Number(_), Operand::Result)
        ) {
            return Err("each comparison must compare `result` with a number".into());
        }
        Ok(Expr::Compare(left, op, right))
    }

    fn operand(&mut self) -> Result<Operand, String> {
        match self.next() {
            Some(Token::Result) => Ok(Operand::Result),
            Some(Token::Number(n)) => Ok(Operand::Number(n)),
            _ => Err("expected `result` or a number".into()),
        }
    }
}

fn tokenize(text: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let rest: String = chars[i..].iter().take(2).collect();
        let (token, width) = match chars[i] {
            c if c.is_whitespace() => {
                i += 1;
                continue;
            }
            '(' => (Token::Open, 1),
            ')' => (Token::Close, 1),
            _ if rest == "&&" => (Token::And, 2),
            _ if rest == "||" => (Token::Or, 2),
            _ if rest == "<=" => (Token::Op(Op::LessEqual), 2),
            _ if rest == ">=" => (Token::Op(Op::GreaterEqual), 2),
            _ if rest == "==" => (Token::Op(Op::Equal), 2),
            _ if rest == "!=" => (Token::Op(Op::NotEqual), 2),
            '<' => (Token::Op(Op::Less), 1),
            '>' => (Token::Op(Op::Greater), 1),
            c if c.is_ascii_digit() || c == '.' || c == '-' => number(&chars[i..])?,
            c if c.is_ascii_alphabetic() => word(&chars[i..])?,
            c => return Err(format!("unexpected character {c:?}")),
        };
        tokens.push(token);
        i += width;
    }
    Ok(tokens)
}

fn number(chars: &[char]) -> Result<(Token, usize), String> {
    let width = chars
        .iter()
        .enumerate()
        .take_while(|(i, c)| {
            c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E') || (*i == 0 && **c == '-')
        })
        .count();
    let text: String = chars[..width].iter().collect();
    let value: f64 = text
        .parse()
        .map_err(|_| format!("{text:?} is not a number"))?;
    Ok((Token::Number(value), width))
}

fn word(chars: &[char]) -> Result<(Token, usize), String> {
    let width = chars
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == '_')
        .count();
    let text: String = chars[..width].iter().collect();
    match text.as_str() {
        "and" => Ok((Token::And, width)),
        "or" => Ok((Token::Or, width)),
        "result" => {
            // `result[0]` is the same single value: a gate reads one sample.
            let index: String = chars[width..].iter().take(3).collect();
            if index == "[0]" {
                Ok((Token::Result, width + 3))
            } else if chars.get(width) == Some(&'[') {
                Err("only result[0] can be indexed: the gate reads one value".into())
            } else {
                Ok((Token::Result, width))
            }
        }
        other => Err(format!("unknown name {other:?} (only `result` is known)")),
    }
}

#[cfg(test)]
mod tests {
    use super::SuccessCondition;

    fn holds(condition: &str, value: f64) -> bool {
        SuccessCondition::parse(condition)
            .map(|c| c.holds(value))
            .unwrap_or_else(|e| panic!("{condition}: {e}"))
    }

    #[test]
    fn comparisons_of_the_result() {
        assert!(holds("result < 0.01", 0.005));
        assert!(!holds("result < 0.01", 0.01));
        assert!(holds("result[0] >= 0.95", 0.95));
        assert!(holds("0.5 > result", 0.4));
        assert!(holds("result == 1", 1.0));
        assert!(holds("result != 1", 2.0));
        assert!(
            !holds("result < 1", f64::NAN),
            "NaN never satisfies a comparison"
        );
        assert!(holds("result > -1e3", -10.0));
    }

    #[test]
    fn and_binds_tighter_than_or() {
        assert!(holds("result > 5 || result > 0 && result < 1", 0.5));
        assert!(!holds("(result > 5 || result > 0) && result < 1", 6.0));
        assert!(holds("result >= 1 and result <= 2", 1.5));
        assert!(holds("result < 0 or result > 10", 11.0));
    }

    #[test]
    fn bad_conditions_are_refused_in_words() {
        for bad in [
            "",
            "result",
            "result < ",
            "result[1] < 2",
            "latency < 2",
            "1 < 2",
            "result < 0.01 extra",
            "(result < 1",
            "result ~ 1",
        ] {
            assert!(SuccessCondition::parse(bad).is_err(), "{bad:?} parsed");
        }
    }
}
