// Reports every uploaded file (GenericIntegrationFileTransfer): its name, size and SHA-256, computed
// here from the bytes read with Context.ReadFile in ranges, and whether they match what the service
// measured on upload. The form fields come back too. SHA-256 in plain JavaScript is slow in the
// sandbox (about a megabyte per second): fine for documents, not for large media.
const entity = Context.GetRequestEntity();
if (!entity) Context.RaiseError("Missing entity", "The request entity is null");

const RANGE = 1024 * 1024;
const files = [];
for (const file of entity.RequestFiles || []) {
  const hash = sha256();
  let size = 0;
  for (let offset = 0; offset < file.Size; offset += RANGE) {
    const bytes = new Uint8Array(await Context.ReadFile(file.Id, { offset, length: RANGE, encoding: "bytes" }));
    hash.update(bytes);
    size += bytes.length;
  }
  const digest = hash.hex();
  files.push({
    PartName: file.PartName,
    FileName: file.FileName,
    ContentType: file.ContentType,
    Size: size,
    Sha256: digest,
    Verified: size === file.Size && digest === file.Sha256,
  });
}
entity.ResponseBody = { Fields: entity.RequestBody, Files: files };
Context.SetResponseEntity(entity);

/** An incremental SHA-256 (FIPS 180-4): update(bytes) any number of times, then hex(). */
function sha256() {
  const K = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
  ];
  const H = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
  const W = new Int32Array(64);
  const block = new Uint8Array(64);
  let fill = 0;
  let total = 0;

  function compress() {
    for (let i = 0; i < 16; i++) W[i] = (block[4 * i] << 24) | (block[4 * i + 1] << 16) | (block[4 * i + 2] << 8) | block[4 * i + 3];
    for (let i = 16; i < 64; i++) {
      const x = W[i - 15];
      const y = W[i - 2];
      const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
      const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
      W[i] = (W[i - 16] + s0 + W[i - 7] + s1) | 0;
    }
    let [a, b, c, d, e, f, g, h] = H;
    for (let i = 0; i < 64; i++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (h + S1 + ((e & f) ^ (~e & g)) + K[i] + W[i]) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    const next = [a, b, c, d, e, f, g, h];
    for (let i = 0; i < 8; i++) H[i] = (H[i] + next[i]) | 0;
  }

  function add(bytes) {
    for (let i = 0; i < bytes.length; i++) {
      block[fill++] = bytes[i];
      if (fill === 64) {
        compress();
        fill = 0;
      }
    }
  }

  return {
    update(bytes) {
      add(bytes);
      total += bytes.length;
    },
    hex() {
      const bits = total * 8;
      const tail = new Uint8Array((fill < 56 ? 56 - fill : 120 - fill) + 8);
      tail[0] = 0x80;
      const high = Math.floor(bits / 0x100000000);
      const low = bits >>> 0;
      for (let i = 0; i < 4; i++) {
        tail[tail.length - 8 + i] = (high >>> (24 - 8 * i)) & 0xff;
        tail[tail.length - 4 + i] = (low >>> (24 - 8 * i)) & 0xff;
      }
      add(tail);
      return H.map((word) => (word >>> 0).toString(16).padStart(8, "0")).join("");
    },
  };
}
