//! Dodging: the lines of a chart moved a little apart sideways where their error bars and markers
//! would overlap: at one x, or at xs that fall together on the plot (50 and 51 columns on a log
//! axis, the row sizes probed closely around 100,000 bytes).

/// A point's mark as drawn, in pixels along the plot: its line, where its centre is across, and
/// how far it reaches along the other axis (its error bar, or its marker where that is longer).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mark {
    /// The line's position in the legend: lines are laid side by side in this order.
    pub line: usize,
    pub x: f64,
    pub low: f64,
    pub high: f64,
}

impl Mark {
    /// Whether `self` and `other`, `width` wide each, overlap.
    fn overlaps(&self, other: &Mark, width: f64) -> bool {
        (self.x - other.x).abs() < width && self.low <= other.high && other.low <= self.high
    }
}

/// How far to move each of `marks` across, in pixels, so that marks of different lines, `width`
/// wide each, do not overlap.
///
/// Marks closer than `width` across, one to the next, form a cluster (one x, or xs the plot
/// cannot tell apart). In a cluster, lines whose marks overlap, directly or through another
/// line, are laid side by side `width` apart around where they were, in legend order; every mark
/// of a line moves by its line's offset, so a line keeps its shape, and no mark moves further
/// than half the width of all the lines. Lines whose marks overlap no other line's stay put, as
/// do the marks of one line that fall together (they are one colour, and the line shows them).
pub fn dodge(marks: &[Mark], width: f64) -> Vec<f64> {
    let mut offsets = vec![0.0; marks.len()];
    let mut order: Vec<usize> = (0..marks.len()).collect();
    order.sort_by(|&a, &b| marks[a].x.total_cmp(&marks[b].x));
    for cluster in order.chunk_by(|&a, &b| marks[b].x - marks[a].x < width) {
        for (line, offset) in line_offsets(marks, cluster, width) {
            for &i in cluster.iter().filter(|&&i| marks[i].line == line) {
                offsets[i] = offset;
            }
        }
    }
    offsets
}

/// Each line of `cluster` (indices into `marks`) that overlaps another, with its offset.
fn line_offsets(marks: &[Mark], cluster: &[usize], width: f64) -> Vec<(usize, f64)> {
    let mut lines: Vec<usize> = cluster.iter().map(|&i| marks[i].line).collect();
    lines.sort_unstable();
    lines.dedup();
    // Lines that overlap, directly or through others, share a group: union-find over `lines`.
    let mut group: Vec<usize> = (0..lines.len()).collect();
    fn root(group: &mut [usize], mut i: usize) -> usize {
        while group[i] != i {
            group[i] = group[group[i]];
            i = group[i];
        }
        i
    }
    let slot = |line: usize| lines.binary_search(&line).expect("a line of the cluster");
    for (k, &i) in cluster.iter().enumerate() {
        for &j in &cluster[k + 1..] {
            let (a, b) = (&marks[i], &marks[j]);
            if a.line != b.line && a.overlaps(b, width) {
                let (a, b) = (
                    root(&mut group, slot(a.line)),
                    root(&mut group, slot(b.line)),
                );
                group[a.max(b)] = a.min(b);
            }
        }
    }
    let mut offsets = Vec::new();
    for r in 0..lines.len() {
        let members: Vec<usize> = (0..lines.len())
            .filter(|&l| root(&mut group, l) == r)
            .collect();
        if members.len() < 2 {
            continue;
        }
        let first = -width * (members.len() - 1) as f64 / 2.0;
        for (k, &l) in members.iter().enumerate() {
            offsets.push((lines[l], first + width * k as f64));
        }
    }
    offsets
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(line: usize, x: f64, low: f64, high: f64) -> Mark {
        Mark { line, x, low, high }
    }

    #[test]
    fn lines_apart_stay_where_they_are() {
        // Same x, different heights; same height, far apart; one line's marks falling together.
        let marks = [
            mark(0, 100.0, 0.0, 10.0),
            mark(1, 100.0, 20.0, 30.0),
            mark(2, 200.0, 0.0, 10.0),
            mark(0, 300.0, 0.0, 10.0),
            mark(0, 303.0, 0.0, 10.0),
        ];
        assert_eq!(dodge(&marks, 12.0), [0.0; 5]);
    }

    #[test]
    fn overlapping_lines_at_one_x_are_laid_side_by_side_in_legend_order() {
        let marks = [
            mark(2, 100.0, 8.0, 9.0),
            mark(0, 100.0, 0.0, 10.0),
            mark(1, 100.0, 5.0, 15.0),
        ];
        assert_eq!(dodge(&marks, 12.0), [12.0, -12.0, 0.0]);
    }

    #[test]
    fn only_the_lines_that_overlap_move() {
        let marks = [
            mark(0, 100.0, 0.0, 10.0),
            mark(1, 100.0, 5.0, 15.0),
            mark(2, 100.0, 50.0, 60.0),
        ];
        assert_eq!(dodge(&marks, 12.0), [-6.0, 6.0, 0.0]);
    }

    #[test]
    fn xs_that_fall_together_move_by_their_lines_offset() {
        // Two lines at 50 and 51 columns, 3 px apart on the axis, and seven row sizes within
        // a pixel of one another: each line moves as one, by no more than half a width.
        let mut marks = vec![
            mark(0, 500.0, 0.0, 10.0),
            mark(1, 500.0, 2.0, 12.0),
            mark(0, 503.0, 1.0, 11.0),
            mark(1, 503.0, 3.0, 13.0),
        ];
        for k in 0..7 {
            let x = 800.0 + k as f64 * 0.1;
            marks.extend([mark(0, x, 0.0, 10.0), mark(1, x, 5.0, 15.0)]);
        }
        let offsets = dodge(&marks, 12.0);
        for (m, dx) in marks.iter().zip(&offsets) {
            assert_eq!(*dx, if m.line == 0 { -6.0 } else { 6.0 }, "{m:?}");
        }
    }
}
