//! The record of which nodes' loads changed, for policies that re-examine only those.

/// Nodes whose load changed since the last [`ChangeLog::take`], each once.
///
/// # Complexity
/// `O(1)` per change noted; `O(changed)` per take; memory `O(N)` at most.
#[derive(Debug, Clone)]
pub(crate) struct ChangeLog {
    noted: Vec<bool>,
    nodes: Vec<u32>,
}

impl ChangeLog {
    /// An empty record for `nodes` nodes.
    pub fn new(nodes: usize) -> Self {
        Self {
            noted: vec![false; nodes],
            nodes: Vec::new(),
        }
    }

    /// `node`'s load changed.
    #[inline]
    pub fn note(&mut self, node: usize) {
        if !self.noted[node] {
            self.noted[node] = true;
            self.nodes.push(node as u32);
        }
    }

    /// Appends the nodes noted since the last take to `out` and forgets them.
    pub fn take(&mut self, out: &mut Vec<usize>) {
        for &v in &self.nodes {
            self.noted[v as usize] = false;
            out.push(v as usize);
        }
        self.nodes.clear();
    }
}
