// Connect-out mode of the Node.js bot: `node bot.js --connect HOST:PORT[,HOST:PORT] --bot NAME`
// (token in --token or $DIGDOWN_TOKEN). The bot opens the Ladder's Play stream
// (protos/digdown/v1/ladder.proto) and answers the decisions that arrive on it; it
// listens on no port, so it plays from behind a home router.
//
// The protocol, in full: send `hello` {bot}; the server answers `welcome`; then answer
// every `handshake` and `decision` with the same `correlation_id`, every `ping` with a
// `pong` of the same nonce; `match_end` says how a match ended. A stream that ends is
// opened again after a backoff (0.5 s doubling to 30 s, jittered), on the next address;
// statuses that reconnecting cannot fix (bad token, someone else's bot, not a connected
// bot) end the process with code 2.
'use strict';

const grpc = require('@grpc/grpc-js');

const FATAL = new Set([
  grpc.status.UNAUTHENTICATED,
  grpc.status.PERMISSION_DENIED,
  grpc.status.NOT_FOUND,
  grpc.status.FAILED_PRECONDITION,
  grpc.status.INVALID_ARGUMENT,
]);

// decide(request) -> Promise<Action>: the same policy as the serve mode's Act.
function connect(digdown, args, decide, identity) {
  const addresses = args.connect.split(',').map((a) => a.trim()).filter(Boolean);
  const token = args.token || process.env.DIGDOWN_TOKEN || '';
  if (!addresses.length || !args.bot || !token) {
    console.error('connect mode needs --connect HOST:PORT, --bot NAME and --token (or $DIGDOWN_TOKEN)');
    process.exit(2);
  }
  let attempt = 0;
  let backoff = 500;
  let stopping = false;
  let call = null;
  let decisions = 0;

  const open = () => {
    const address = addresses[attempt % addresses.length];
    attempt += 1;
    const client = new digdown.Ladder(address, grpc.credentials.createInsecure(), {
      'grpc.keepalive_time_ms': 20000,
      'grpc.keepalive_timeout_ms': 10000,
      'grpc.keepalive_permit_without_calls': 1,
    });
    const metadata = new grpc.Metadata();
    metadata.set('authorization', `Bearer ${token}`);
    call = client.Play(metadata);
    let welcomed = false;
    let ended = false;
    call.on('data', (msg) => {
      switch (msg.kind) {
        case 'welcome':
          welcomed = true;
          backoff = 500;
          console.error(`connected to ${address} as ${msg.welcome.bot} (stream ${msg.welcome.stream_id})`);
          break;
        case 'ping':
          call.write({ pong: { nonce: msg.ping.nonce } });
          break;
        case 'handshake':
          console.error(`match ${msg.handshake.match_id}: playing seat ${msg.handshake.seat}`);
          call.write({ handshake: { correlation_id: msg.handshake.correlation_id, reply: identity } });
          break;
        case 'decision': {
          const id = msg.decision.correlation_id;
          decide(msg.decision.request)
            .then((action) => {
              decisions += 1;
              call.write({ decision: { correlation_id: id, reply: { action } } });
            })
            .catch((err) => call.write({ decision: { correlation_id: id, error: `bot error: ${err.message}` } }));
          break;
        }
        case 'match_end': {
          const e = msg.match_end;
          const rating = e.rating_after ? `, rating ${e.rating_before.toFixed(1)} -> ${e.rating_after.toFixed(1)}` : '';
          console.error(`match ${e.match_id} ${e.status.toLowerCase()}: seat ${e.seat} rank ${e.rank} of ${e.seats}${rating}`);
          break;
        }
        default:
          break;
      }
    });
    const again = (code, details) => {
      if (ended) return;
      ended = true;
      client.close();
      if (stopping) return;
      if (FATAL.has(code)) {
        console.error(`the ladder refused the stream: ${code} ${details}`);
        process.exit(2);
      }
      if (welcomed) backoff = 500;
      const delay = backoff * (0.5 + Math.random() / 2);
      backoff = Math.min(backoff * 2, 30000);
      console.error(`stream to ${address} ended (${code}: ${details}); reconnecting in ${(delay / 1000).toFixed(1)} s`);
      setTimeout(open, delay);
    };
    call.on('error', (err) => again(err.code, err.details || err.message));
    call.on('end', () => again(grpc.status.OK, 'the server ended the stream'));
    call.write({ hello: { bot: args.bot, label: `node pid ${process.pid}` } });
  };

  const stop = (signal) => {
    stopping = true;
    console.error(`${signal}: closing the stream after ${decisions} decisions`);
    if (call) call.cancel();
    setTimeout(() => process.exit(0), 200).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  open();
}

module.exports = { connect };
