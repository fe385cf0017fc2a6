// A downstream API for the benchmark's forwarding connector: answers every POST with a small JSON
// receipt. Logs {"msg":"listening","port":N} once it listens (see processes.mjs startNode).
import http from 'node:http';

const server = http.createServer((request, response) => {
  let received = 0;
  request.on('data', (chunk) => (received += chunk.length));
  request.on('end', () => {
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ accepted: true, received }));
  });
});
server.keepAliveTimeout = 5000;
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ msg: 'listening', port: server.address().port })));
