//! [`ClusterSet::check`]: the whole structure recomputed from scratch and compared.

use super::{dividend, ClusterSet, NIL};

impl ClusterSet {
    /// Checks members, dividends, the hash table and the tournament against a recompute
    /// from scratch; `Err` names the first problem.
    pub fn check(&self) -> Result<(), String> {
        let mut members = 0usize;
        for (&cluster, &s) in &self.by_cluster {
            let c = &self.slots[s as usize];
            if !c.live || c.cluster != cluster {
                return Err(format!(
                    "clusters: slot {s} does not hold cluster {cluster}"
                ));
            }
            let (mut n, mut sum, mut prev, mut cur) = (0u32, 0u64, NIL, c.head);
            while cur != NIL {
                let i = cur as usize;
                if self.at[i].slot != s || self.at[i].prev != prev {
                    return Err(format!(
                        "clusters: frame {cur} badly linked in cluster {cluster}"
                    ));
                }
                if self.at[i].pid / self.cluster_size != cluster {
                    return Err(format!(
                        "clusters: page {} in cluster {cluster}",
                        self.at[i].pid
                    ));
                }
                if prev != NIL {
                    sum += self.at[prev as usize].pid.abs_diff(self.at[i].pid);
                }
                n += 1;
                if n > c.n {
                    return Err(format!("clusters: cluster {cluster} longer than {}", c.n));
                }
                prev = cur;
                cur = self.at[i].next;
            }
            if n != c.n
                || n == 0
                || prev != c.tail
                || sum != c.sum
                || c.div != dividend(c)
                || c.n2 != u64::from(n) * u64::from(n)
            {
                return Err(format!(
                    "clusters: cluster {cluster} has n={n} sum={sum}, records n={} sum={}",
                    c.n, c.sum
                ));
            }
            if c.stamp >= self.globaltime {
                return Err(format!("clusters: cluster {cluster} stamped in the future"));
            }
            members += n as usize;
        }
        let linked = self.at.iter().filter(|m| m.slot != NIL).count();
        if members != self.members || linked != members {
            return Err(format!(
                "clusters: {members} linked, {linked} frames claim a cluster, count {}",
                self.members
            ));
        }
        let live = self.slots.iter().filter(|c| c.live).count();
        if live != self.by_cluster.len() || live + self.free.len() != self.slots.len() {
            return Err("clusters: slot accounting broken".into());
        }
        // The tournament: every node's winner and certificate, from scratch.
        for node in (1..self.leaves).rev() {
            let [l, r] = self.tree[node];
            let w = match (l.win, r.win) {
                (NIL, x) | (x, NIL) => x,
                (a, b) if self.less(a, b) => a,
                (_, b) => b,
            };
            if self.node(node).win != w {
                return Err(format!(
                    "clusters: tournament node {node} has a stale winner"
                ));
            }
            if self.node(node).exp <= self.globaltime {
                return Err(format!(
                    "clusters: tournament node {node} has an expired certificate"
                ));
            }
        }
        for s in 0..self.slots.len() {
            let want = if self.slots[s].live { s as u32 } else { NIL };
            if self.node(self.leaves + s).win != want {
                return Err(format!("clusters: leaf of slot {s} is stale"));
            }
        }
        let best = self
            .by_cluster
            .values()
            .copied()
            .min_by(|&a, &b| self.cmp_slots(a, b));
        if best.unwrap_or(NIL) != self.root() {
            return Err("clusters: the tournament's root is not the minimum".into());
        }
        Ok(())
    }
}
