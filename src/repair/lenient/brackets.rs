//! Which bracket closes which, over the whole input (quotes ignored): inside bare text a
//! bracket that pairs up holds text; one that never pairs up is an ordinary character, so it
//! cannot swallow the object's own closer (`echo [WARN}; rm -rf ~`).

use std::collections::HashMap;

#[derive(Debug, Default)]
pub struct Brackets {
    /// Opener position → the position of the closer that pairs with it (a fast hasher: built
    /// for every reading, and its keys are offsets).
    pairs: HashMap<usize, usize, foldhash::fast::RandomState>,
}

impl Brackets {
    pub fn of(src: &str) -> Self {
        let mut pairs = HashMap::default();
        let mut open: Vec<(u8, usize)> = Vec::new();
        for (i, byte) in src.bytes().enumerate() {
            let opener = match byte {
                b'{' | b'[' | b'(' => {
                    open.push((byte, i));
                    continue;
                }
                b'}' => b'{',
                b']' => b'[',
                b')' => b'(',
                _ => continue,
            };
            // A closer pairs with the innermost opener of its kind; openers of other kinds
            // inside that one never pair (`(` in `{ ( }` ends there). With none open, it pairs
            // with nothing.
            if let Some(depth) = open.iter().rposition(|(b, _)| *b == opener) {
                let (_, at) = open[depth];
                open.truncate(depth);
                pairs.insert(at, i);
            }
        }
        Self { pairs }
    }

    /// The closer that pairs with the opener at `at`.
    pub fn closer_of(&self, at: usize) -> Option<usize> {
        self.pairs.get(&at).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brackets_pair_innermost_first_and_strays_pair_with_nothing() {
        let text = "{a (b [c] d} e)";
        let brackets = Brackets::of(text);
        assert_eq!(brackets.closer_of(6), Some(8));
        assert_eq!(brackets.closer_of(3), None, "`(` meets `}}` first");
        assert_eq!(brackets.closer_of(0), Some(11));
        assert_eq!(Brackets::of("echo [WARN}").closer_of(5), None);
    }
}
