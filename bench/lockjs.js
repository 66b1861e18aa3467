// bench: node worker_threads compressing and writing, with Atomics on a shared counter
const { Worker, isMainThread, workerData, parentPort } = require('worker_threads');
const zlib = require('zlib'), fs = require('fs'), os = require('os'), path = require('path');
if (isMainThread) {
  const jobs = parseInt(process.argv[2] || '400'), W = 2;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pttjs-'));
  let done = 0, sum = 0;
  for (let w = 0; w < W; w++) {
    const wk = new Worker(__filename, { workerData: { jobs: jobs / W, dir, id: w } });
    wk.on('message', (n) => { sum += n; });
    wk.on('exit', () => { if (++done === W) { fs.rmSync(dir, { recursive: true }); console.log(sum); } });
  }
} else {
  const { jobs, dir, id } = workerData;
  const buf = Buffer.alloc(64 * 1024);
  for (let i = 0; i < buf.length; i++) buf[i] = (i * 7919 + id) % 61 + 32;
  let n = 0, pending = jobs;
  for (let j = 0; j < jobs; j++) {
    zlib.deflate(buf, { level: 1 }, (err, out) => {
      fs.writeFile(path.join(dir, `${id}-${j}`), out, () => {
        n += out.length;
        if (--pending === 0) parentPort.postMessage(n);
      });
    });
  }
}
