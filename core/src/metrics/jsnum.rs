//! Numbers as JavaScript's `String(n)` writes them. Upstream's Prometheus text comes from its
//! JS port and the other ports copy its digits, so this is what makes ours byte-identical:
//! the shortest digits that read back as the same double, `1` not `1.0`, and exponents only
//! outside `1e-7 < |n| < 1e21`.

/// `n` in JavaScript's `Number.prototype.toString()` form.
pub fn js_number(n: f64) -> String {
    if n.is_nan() {
        return "NaN".into();
    }
    if n.is_infinite() {
        return if n > 0.0 { "Infinity".into() } else { "-Infinity".into() };
    }
    if n == 0.0 {
        return "0".into();
    }
    let sign = if n < 0.0 { "-" } else { "" };
    // Rust's `{:e}` prints the shortest round-trip digits: `d[.ddd]e<exp>`.
    let sci = format!("{:e}", n.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let exp: i32 = exp.parse().unwrap_or(0);
    let k = digits.len() as i32;
    // The decimal point sits after `point` digits.
    let point = exp + 1;
    let body = if k <= point && point <= 21 {
        format!("{digits}{}", "0".repeat((point - k) as usize))
    } else if 0 < point && point <= 21 {
        let (int, frac) = digits.split_at(point as usize);
        format!("{int}.{frac}")
    } else if -6 < point && point <= 0 {
        format!("0.{}{digits}", "0".repeat((-point) as usize))
    } else {
        let e = point - 1;
        let e_sign = if e >= 0 { "+" } else { "-" };
        let (first, rest) = digits.split_at(1);
        let frac = if rest.is_empty() { String::new() } else { format!(".{rest}") };
        format!("{first}{frac}e{e_sign}{}", e.abs())
    };
    format!("{sign}{body}")
}

#[cfg(test)]
mod tests {
    use super::js_number;

    #[test]
    fn matches_javascript() {
        // Each right-hand side is what node prints for `String(<left>)`.
        let cases: [(f64, &str); 18] = [
            (0.0, "0"),
            (-0.0, "0"),
            (1.0, "1"),
            (60.0, "60"),
            (0.05, "0.05"),
            (0.1 + 0.2, "0.30000000000000004"),
            (2.5, "2.5"),
            (123456.789, "123456.789"),
            (0.000001, "0.000001"),
            (0.0000001, "1e-7"),
            (0.00000123, "0.00000123"),
            (1.5e-10, "1.5e-10"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1.2345e22, "1.2345e+22"),
            (-3.25, "-3.25"),
            (f64::INFINITY, "Infinity"),
            (9007199254740993.0, "9007199254740992"),
        ];
        for (n, want) in cases {
            assert_eq!(js_number(n), want, "{n:e}");
        }
        assert_eq!(js_number(f64::NAN), "NaN");
    }
}
