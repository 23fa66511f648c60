//! The random stream of Python's `random.Random`, reproduced draw for draw.
//!
//! Statistics tables must be regenerable bit for bit from a seed, and the bootstrap and the
//! randomization test were first written in Python on `random.Random(seed)`. Reproducing that
//! generator here (the Mersenne Twister MT19937 seeded by `init_by_array`, as CPython's
//! `_randommodule.c` does) keeps every published interval and p-value unchanged when the
//! arithmetic moved to Rust, and gives the tests an independent oracle: a few lines of Python
//! on `random.Random` draw the same numbers.
//!
//! Only the draws the statistics use are here: [`PyRandom::random`] (`random.random()`),
//! [`PyRandom::index`] (one element of `random.choices(population, k=...)` without weights) and
//! [`PyRandom::getrandbits`] (`random.getrandbits(k)`).

const N: usize = 624;
const M: usize = 397;
const MATRIX_A: u32 = 0x9908_b0df;
const UPPER_MASK: u32 = 0x8000_0000;
const LOWER_MASK: u32 = 0x7fff_ffff;

/// MT19937 in the state CPython's `random.Random(seed)` leaves it. Each twist tempers its 624
/// words at once into `out` (a loop the compiler vectorises); draws read from there.
#[derive(Clone)]
pub struct PyRandom {
    mt: [u32; N],
    out: [u32; N],
    index: usize,
}

/// The key CPython seeds with for an integer seed: the 32-bit words of `|seed|`, least
/// significant first; `[0]` for zero.
pub fn seed_key(seed: u64) -> Vec<u32> {
    if seed == 0 {
        return vec![0];
    }
    let lo = seed as u32;
    let hi = (seed >> 32) as u32;
    if hi == 0 {
        vec![lo]
    } else {
        vec![lo, hi]
    }
}

impl PyRandom {
    /// The generator of `random.Random(seed)` for a non-negative integer seed.
    pub fn new(seed: u64) -> Self {
        Self::from_key(&seed_key(seed))
    }

    /// The generator seeded by `init_by_array(key)`; an empty key is taken as `[0]` (CPython
    /// never passes one: the key of 0 is `[0]`).
    pub fn from_key(key: &[u32]) -> Self {
        let key: &[u32] = if key.is_empty() { &[0] } else { key };
        let mut mt = [0u32; N];
        mt[0] = 19_650_218;
        for i in 1..N {
            mt[i] = 1_812_433_253u32
                .wrapping_mul(mt[i - 1] ^ (mt[i - 1] >> 30))
                .wrapping_add(i as u32);
        }
        let (mut i, mut j) = (1usize, 0usize);
        for _ in 0..N.max(key.len()) {
            mt[i] = (mt[i] ^ (mt[i - 1] ^ (mt[i - 1] >> 30)).wrapping_mul(1_664_525))
                .wrapping_add(key[j])
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= N {
                mt[0] = mt[N - 1];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
        }
        for _ in 0..N - 1 {
            mt[i] = (mt[i] ^ (mt[i - 1] ^ (mt[i - 1] >> 30)).wrapping_mul(1_566_083_941))
                .wrapping_sub(i as u32);
            i += 1;
            if i >= N {
                mt[0] = mt[N - 1];
                i = 1;
            }
        }
        mt[0] = 0x8000_0000;
        Self {
            mt,
            out: [0; N],
            index: N,
        }
    }

    fn twist(&mut self) {
        let mt = &mut self.mt;
        let mag = |y: u32| if y & 1 == 1 { MATRIX_A } else { 0 };
        for kk in 0..N - M {
            let y = (mt[kk] & UPPER_MASK) | (mt[kk + 1] & LOWER_MASK);
            mt[kk] = mt[kk + M] ^ (y >> 1) ^ mag(y);
        }
        for kk in N - M..N - 1 {
            let y = (mt[kk] & UPPER_MASK) | (mt[kk + 1] & LOWER_MASK);
            mt[kk] = mt[kk + M - N] ^ (y >> 1) ^ mag(y);
        }
        let y = (mt[N - 1] & UPPER_MASK) | (mt[0] & LOWER_MASK);
        mt[N - 1] = mt[M - 1] ^ (y >> 1) ^ mag(y);
        for (o, &m) in self.out.iter_mut().zip(mt.iter()) {
            let mut y = m;
            y ^= y >> 11;
            y ^= (y << 7) & 0x9d2c_5680;
            y ^= (y << 15) & 0xefc6_0000;
            *o = y ^ (y >> 18);
        }
        self.index = 0;
    }

    /// The next 32-bit output (`genrand_uint32`).
    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        if self.index >= N {
            self.twist();
        }
        let y = self.out[self.index];
        self.index += 1;
        y
    }

    /// `random.random()`: 53 random bits as a float in [0, 1).
    #[inline]
    pub fn random(&mut self) -> f64 {
        let a = (self.next_u32() >> 5) as f64;
        let b = (self.next_u32() >> 6) as f64;
        (a * 67_108_864.0 + b) * (1.0 / 9_007_199_254_740_992.0)
    }

    /// One index of `random.choices(population, k=...)` over a population of `len` elements
    /// (`len` given as a float, as CPython converts it once): `floor(random() * len)`. The
    /// product never reaches `len` in practice; it is clamped so that it cannot.
    #[inline]
    pub fn index(&mut self, len: f64) -> usize {
        let i = (self.random() * len) as usize;
        let top = len as usize - 1;
        if i > top {
            top
        } else {
            i
        }
    }

    /// `random.getrandbits(k)` as little-endian 32-bit words (`k >= 1`): the first output fills
    /// the least significant word, the last word keeps its `k mod 32` top bits.
    pub fn getrandbits(&mut self, k: u32, words: &mut Vec<u32>) {
        words.clear();
        let mut left = k as i64;
        while left > 0 {
            let r = self.next_u32();
            words.push(if left < 32 { r >> (32 - left) } else { r });
            left -= 32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reference values printed by CPython 3.11:
    //   r = random.Random(0); [r.getrandbits(32) for _ in range(3)]
    //   random.Random(0).random(), random.Random(2**40 + 5).random()
    #[test]
    fn matches_cpython_seed_0() {
        let mut r = PyRandom::new(0);
        assert_eq!(
            [r.next_u32(), r.next_u32(), r.next_u32()],
            [3_626_764_237, 1_654_615_998, 3_255_389_356]
        );
        assert_eq!(PyRandom::new(0).random(), 0.844_421_851_525_048_1);
    }

    #[test]
    fn long_seed_uses_two_words() {
        assert_eq!(seed_key((1 << 40) + 5), vec![5, 256]);
        assert_eq!(seed_key(7), vec![7]);
        assert_eq!(seed_key(0), vec![0]);
        assert_eq!(
            PyRandom::new((1 << 40) + 5).random(),
            0.504_380_297_041_844_3
        );
    }

    #[test]
    fn getrandbits_words() {
        let mut a = PyRandom::new(3);
        let mut b = PyRandom::new(3);
        let mut w = Vec::new();
        a.getrandbits(40, &mut w);
        assert_eq!(w.len(), 2);
        assert_eq!(w[0], b.next_u32());
        assert_eq!(w[1], b.next_u32() >> 24);
        a.getrandbits(5, &mut w);
        assert_eq!(w, vec![b.next_u32() >> 27]);
    }
}
