//! Where the text admits more than one reading, the parser asks here which to take. One parse
//! follows one script of answers; [`Choices::advance`] steps to the next untried script, so
//! parsing again and again walks every combination (depth first, bounded by the caller).

/// The answers of one parse, and what each point offered.
#[derive(Debug, Default, Clone)]
pub struct Choices {
    /// The option taken at each choice point, in the order the parse met them.
    taken: Vec<u8>,
    /// How many options each point had.
    offered: Vec<u8>,
    cursor: usize,
}

/// The two readings of a weak terminator or a comment marker.
pub const KEEP_AS_TEXT: u8 = 0;
pub const TAKE_AS_STRUCTURE: u8 = 1;

impl Choices {
    /// The option to take at the next choice point, which offers `options` (at least 1).
    pub fn choose(&mut self, options: u8) -> u8 {
        let k = self.cursor;
        self.cursor += 1;
        if k < self.taken.len() {
            self.offered[k] = options;
            return self.taken[k].min(options.saturating_sub(1));
        }
        self.taken.push(0);
        self.offered.push(options);
        0
    }

    /// Whether this parse met any choice point at all.
    pub fn any(&self) -> bool {
        self.cursor > 0
    }

    /// Moves to the next script: the last point with an untried option takes it, and what came
    /// after it is forgotten. `false` when every combination has been tried.
    pub fn advance(&mut self) -> bool {
        self.taken.truncate(self.cursor);
        self.offered.truncate(self.cursor);
        self.cursor = 0;
        while let Some(last) = self.taken.len().checked_sub(1) {
            if self.taken[last] + 1 < self.offered[last] {
                self.taken[last] += 1;
                return true;
            }
            self.taken.pop();
            self.offered.pop();
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A "parse" that meets two binary points, and a third only after taking option 1 first.
    fn walk(choices: &mut Choices) -> Vec<u8> {
        let a = choices.choose(2);
        let b = choices.choose(2);
        let mut path = vec![a, b];
        if a == 1 {
            path.push(choices.choose(2));
        }
        path
    }

    #[test]
    fn advancing_visits_every_combination_once() {
        let mut choices = Choices::default();
        let mut seen = Vec::new();
        loop {
            seen.push(walk(&mut choices));
            if !choices.advance() {
                break;
            }
        }
        let expected: Vec<Vec<u8>> =
            vec![vec![0, 0], vec![0, 1], vec![1, 0, 0], vec![1, 0, 1], vec![1, 1, 0], vec![1, 1, 1]];
        assert_eq!(seen, expected);
    }
}
