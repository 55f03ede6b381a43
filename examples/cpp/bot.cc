// A Digging Down bot in C++ from protos/ alone (Debian: libgrpc++-dev protobuf-compiler-grpc g++).
//
//   build/bot --listen 0.0.0.0:50061 [--port-file F]      serve digdown.v1.Bot (the ladder dials it)
//   build/bot --connect HOST:PORT[,HOST:PORT] --bot NAME   connect out (Ladder.Play; token in
//             [--version-label L]                            $DIGDOWN_TOKEN): no listening port
//
// The policy is a random legal action: replace choose() with yours. The connect mode is the
// whole Play protocol (docs/connected-bots.md): send hello {bot, version_label}; after the
// welcome answer every handshake and decision with the same correlation_id, every ping with
// a pong of the same nonce; match_end says how a match ended, notice why the ladder stops
// playing the bot (then the stream closes). A stream that ends is opened again after a
// backoff (0.5 s doubling to 30 s, jittered) on the next address; statuses that reconnecting
// cannot fix (bad token, someone else's bot, a suspended bot) end the process with code 2.
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "digdown/v1/bot.grpc.pb.h"
#include "digdown/v1/ladder.grpc.pb.h"

using digdown::v1::Action;
using digdown::v1::DecisionReply;
using digdown::v1::DecisionRequest;
using digdown::v1::HandshakeReply;
using digdown::v1::HandshakeRequest;
using digdown::v1::Ladder;
using digdown::v1::PlayClientMessage;
using digdown::v1::PlayServerMessage;

namespace {

std::mutex rng_mu;
std::mt19937_64 rng{std::random_device{}()};
std::atomic<bool> stopping{false};

// The policy: one of the legal actions, as it was given.
Action choose(const DecisionRequest& request) {
  std::lock_guard<std::mutex> lock(rng_mu);
  std::uniform_int_distribution<int> pick(0, request.legal_actions_size() - 1);
  return request.legal_actions(pick(rng));
}

HandshakeReply identity() {
  HandshakeReply reply;
  reply.set_name("cpp-random");
  reply.set_version("1");
  reply.set_protocol_version(1);  // unary Act: one decision per call
  return reply;
}

class BotService final : public digdown::v1::Bot::Service {
  grpc::Status Handshake(grpc::ServerContext*, const HandshakeRequest*, HandshakeReply* reply) override {
    *reply = identity();
    return grpc::Status::OK;
  }
  grpc::Status Act(grpc::ServerContext*, const DecisionRequest* request, DecisionReply* reply) override {
    if (request->legal_actions_size() == 0) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "no legal actions");
    }
    *reply->mutable_action() = choose(*request);
    return grpc::Status::OK;
  }
};

// SIGTERM / SIGINT, waited for on a thread of its own (blocked everywhere else).
sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}

int serve(const std::string& listen, const std::string& port_file) {
  grpc::EnableDefaultHealthCheckService(true);
  BotService service;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    std::cerr << "cannot listen on " << listen << std::endl;
    return 1;
  }
  server->GetHealthCheckService()->SetServingStatus("digdown.v1.Bot", true);
  if (!port_file.empty()) std::ofstream(port_file) << port;
  std::cerr << "serving digdown.v1.Bot on port " << port << std::endl;
  sigset_t set = stop_signals();
  int signal = 0;
  sigwait(&set, &signal);
  std::cerr << "signal " << signal << ": stopping" << std::endl;
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  return 0;
}

bool fatal(grpc::StatusCode code) {
  return code == grpc::StatusCode::UNAUTHENTICATED || code == grpc::StatusCode::PERMISSION_DENIED ||
         code == grpc::StatusCode::NOT_FOUND || code == grpc::StatusCode::FAILED_PRECONDITION ||
         code == grpc::StatusCode::INVALID_ARGUMENT;
}

std::mutex call_mu;
grpc::ClientContext* current_call = nullptr;  // cancelled by the signal thread

int connect_out(const std::vector<std::string>& addresses, const std::string& bot, const std::string& token,
                const std::string& version_label) {
  std::thread([] {
    sigset_t set = stop_signals();
    int signal = 0;
    sigwait(&set, &signal);
    std::cerr << "signal " << signal << ": closing the stream" << std::endl;
    stopping = true;
    std::lock_guard<std::mutex> lock(call_mu);
    if (current_call != nullptr) current_call->TryCancel();
  }).detach();
  double backoff = 0.5;
  long decisions = 0;
  for (size_t attempt = 0; !stopping; ++attempt) {
    const std::string& address = addresses[attempt % addresses.size()];
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 20000);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
    args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
    auto channel = grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
    auto stub = Ladder::NewStub(channel);
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer " + token);
    {
      std::lock_guard<std::mutex> lock(call_mu);
      current_call = &context;
    }
    auto stream = stub->Play(&context);
    PlayClientMessage hello;
    hello.mutable_hello()->set_bot(bot);
    hello.mutable_hello()->set_label("cpp pid " + std::to_string(getpid()));
    hello.mutable_hello()->set_version_label(version_label);
    stream->Write(hello);
    PlayServerMessage message;
    while (!stopping && stream->Read(&message)) {
      PlayClientMessage answer;
      switch (message.kind_case()) {
        case PlayServerMessage::kWelcome:
          backoff = 0.5;
          std::cerr << "connected to " << address << " as " << message.welcome().bot() << " (stream "
                    << message.welcome().stream_id() << ")" << std::endl;
          continue;
        case PlayServerMessage::kPing:
          *answer.mutable_pong() = message.ping();
          break;
        case PlayServerMessage::kHandshake:
          std::cerr << "match " << message.handshake().match_id() << ": playing seat "
                    << message.handshake().seat() << std::endl;
          answer.mutable_handshake()->set_correlation_id(message.handshake().correlation_id());
          *answer.mutable_handshake()->mutable_reply() = identity();
          break;
        case PlayServerMessage::kDecision: {
          auto* reply = answer.mutable_decision();
          reply->set_correlation_id(message.decision().correlation_id());
          if (message.decision().request().legal_actions_size() == 0) {
            reply->set_error("no legal actions");
          } else {
            *reply->mutable_reply()->mutable_action() = choose(message.decision().request());
          }
          ++decisions;
          break;
        }
        case PlayServerMessage::kMatchEnd: {
          const auto& end = message.match_end();
          std::cerr << "match " << end.match_id() << " finished: seat " << end.seat() << " rank " << end.rank()
                    << " of " << end.seats();
          if (end.rating_after() != 0) std::cerr << ", rating " << end.rating_before() << " -> " << end.rating_after();
          std::cerr << std::endl;
          continue;
        }
        case PlayServerMessage::kNotice:
          std::cerr << "the ladder says " << message.notice().code() << ": " << message.notice().reason() << std::endl;
          continue;
        default:
          continue;
      }
      stream->Write(answer);
    }
    stream->WritesDone();
    grpc::Status status = stream->Finish();
    {
      std::lock_guard<std::mutex> lock(call_mu);
      current_call = nullptr;
    }
    if (stopping) break;
    if (fatal(status.error_code())) {
      std::cerr << "the ladder refused the stream: " << status.error_code() << " " << status.error_message()
                << std::endl;
      return 2;
    }
    double delay;
    {
      std::lock_guard<std::mutex> lock(rng_mu);
      delay = backoff * std::uniform_real_distribution<double>(0.5, 1.0)(rng);
    }
    std::cerr << "stream to " << address << " ended (" << status.error_code() << ": " << status.error_message()
              << "); reconnecting in " << delay << " s" << std::endl;
    backoff = std::min(backoff * 2, 30.0);
    for (double waited = 0; waited < delay && !stopping; waited += 0.05) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  std::cerr << "stopped after " << decisions << " decisions" << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  sigset_t set = stop_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // every thread: only sigwait takes them
  std::string listen, port_file, connect, bot, token, version_label;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--listen") listen = value;
    else if (flag == "--port-file") port_file = value;
    else if (flag == "--connect") connect = value;
    else if (flag == "--bot") bot = value;
    else if (flag == "--token") token = value;
    else if (flag == "--version-label") version_label = value;
    else {
      std::cerr << "unknown flag " << flag << std::endl;
      return 2;
    }
  }
  if (!connect.empty()) {
    if (token.empty() && std::getenv("DIGDOWN_TOKEN") != nullptr) token = std::getenv("DIGDOWN_TOKEN");
    std::vector<std::string> addresses;
    std::stringstream list(connect);
    for (std::string a; std::getline(list, a, ',');) {
      if (!a.empty()) addresses.push_back(a);
    }
    if (addresses.empty() || bot.empty() || token.empty()) {
      std::cerr << "--connect HOST:PORT needs --bot NAME and a token ($DIGDOWN_TOKEN)" << std::endl;
      return 2;
    }
    return connect_out(addresses, bot, token, version_label);
  }
  if (listen.empty()) {
    std::cerr << "usage: bot --listen HOST:PORT | --connect HOST:PORT --bot NAME" << std::endl;
    return 2;
  }
  return serve(listen, port_file);
}
