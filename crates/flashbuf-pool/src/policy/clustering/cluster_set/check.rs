//! [`ClusterSet::check`]: the whole structure recomputed from scratch and compared.

use super::{ClusterSet, NIL};
use crate::policy::clustering::scan::to_f64;

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
            if n != c.n || n == 0 || prev != c.tail || sum != c.sum {
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
        self.check_scan()?;
        let best = self
            .by_cluster
            .values()
            .copied()
            .min_by(|&a, &b| self.cmp_slots(a, b));
        if best.unwrap_or(NIL) != self.clone().lowest() {
            return Err("clusters: the lowest-priority choice is not the minimum".into());
        }
        Ok(())
    }

    /// The scan's entries: every live cluster once, at its position, with its timestamp
    /// and `r` as floats (−1 while draining), zeroes past them; the draining list.
    fn check_scan(&self) -> Result<(), String> {
        let live = self.by_cluster.len();
        if self.active.len() != live {
            return Err(format!(
                "clusters: {} scan entries for {live} clusters",
                self.active.len()
            ));
        }
        for (pos, &s) in self.active.iter().enumerate() {
            let c = &self.slots[s as usize];
            if !c.live || c.pos as usize != pos {
                return Err(format!("clusters: scan entry {pos} is not slot {s}'s"));
            }
            if self.blocks.entry(pos) != (to_f64(c.stamp), c.scan_r()) {
                return Err(format!(
                    "clusters: scan entry {pos} holds stale inputs of cluster {}",
                    c.cluster
                ));
            }
        }
        if let Some(pos) =
            (live..self.blocks.positions()).find(|&p| self.blocks.entry(p) != (0.0, 0.0))
        {
            return Err(format!(
                "clusters: scan position {pos} past the entries is not zero"
            ));
        }
        let draining = self.slots.iter().filter(|c| c.live && c.draining).count();
        if draining != self.draining.len()
            || self
                .draining
                .iter()
                .any(|&d| !self.slots[d as usize].live || !self.slots[d as usize].draining)
        {
            return Err("clusters: the draining list is not the draining clusters".into());
        }
        Ok(())
    }
}
