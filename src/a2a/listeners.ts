// Where the A2A server listens: JSON-RPC, REST and gRPC on one port
// (HTTP/2 preface sniffing, or ALPN with TLS), gRPC alone, or a separate gRPC
// listener (grpc-port); or a custom JSON-RPC transport. Each gives start-up
// the URLs and interfaces its card lists and a close().
import { readFileSync } from "node:fs";
import type { Router } from "@koa/router";
import type { Logger } from "pino";
import type { AgentRuntime } from "../runtime/seam.js";
import type { A2aServerSettings } from "./config/server-settings.js";
import type { ServerMetrics } from "../server/metrics.js";
import { listenOnePort, splitGrpc, type HttpHandler, type OnePortListener } from "../server/one-port.js";
import { tracedHttp } from "../server/tracing/http.js";
import { createA2aGrpcHandler } from "./bindings/grpc.js";
import { createRestRouter } from "./bindings/rest.js";
import type { Authenticator } from "./core/request/auth.js";
import type { AgentCards } from "./core/card.js";
import type { A2AService } from "./core/service.js";
import { buildHttpApp, type A2aState } from "./http-app.js";
import { createPipelineStateRouter } from "./pipeline-state.js";
import type { StateStore } from "./stores/state.js";
import type { RunningTransport } from "./transports/index.js";

/** What the listening part (HTTP/gRPC, or a custom transport) gives the rest of start-up. */
export interface Served {
  url: string;
  restUrl?: string;
  grpcTarget: string;
  port: number;
  interfaces: Array<{ url: string; protocolBinding: string }>;
  tls: boolean;
  grpcSeparatePort: boolean;
  inputEnded?: Promise<void>;
  close(graceMs: number): Promise<void>;
}

export function servedByTransport(transport: RunningTransport): Served {
  return {
    url: transport.url,
    grpcTarget:
      transport.interfaces[0].protocolBinding === "grpc-jsonrpc"
        ? transport.url.slice("grpc-jsonrpc://".length)
        : "",
    port: transport.port ?? 0,
    interfaces: transport.interfaces,
    tls: transport.tls,
    grpcSeparatePort: false,
    inputEnded: transport.inputEnded,
    close: (graceMs) => transport.close(graceMs),
  };
}

/** JSON-RPC, REST and gRPC on one port (transport http), or gRPC alone (transport grpc). */
export async function listenHttp(
  settings: A2aServerSettings,
  parts: {
    runtime: AgentRuntime;
    /** Extra routers mounted on the same app. */
    routers?: Router<A2aState>[];
    logger: Logger;
    state: StateStore;
    service: A2AService;
    metrics: ServerMetrics;
    auth: Authenticator;
    getCards: () => AgentCards;
  },
): Promise<Served> {
  const { runtime, logger, state, service, metrics, auth, getCards } = parts;
  const httpServed = settings.transport === "http";
  const app = buildHttpApp({
    service,
    metrics,
    auth,
    cards: getCards,
    runtimeInfo: () => runtime.info(),
    ...(runtime.readiness ? { readiness: () => runtime.readiness!() } : {}),
    logger,
    routers: [
      createRestRouter({ core: service, auth, logger }),
      createPipelineStateRouter({
        runtime,
        tasks: state.tasks,
        contexts: state.contexts,
        auth,
        exposure: { toolTrace: false, rawThinking: settings.thinkingExposure.includes("raw_thinking") },
      }),
      ...(parts.routers ?? []),
    ],
  });
  const koa = app.callback();
  const koaHandler: HttpHandler = (req, res) => void koa(req, res);
  // With transport grpc, and on a separate gRPC port, nothing but gRPC is answered.
  const notServed: HttpHandler = (_req, res) => {
    res.statusCode = 404;
    res.setHeader("Content-Type", "application/json");
    res.end(JSON.stringify({ error: "Not found: this listener only serves the A2A gRPC binding." }));
  };
  const grpc = tracedHttp("iac-code.a2a", createA2aGrpcHandler({ core: service, auth, logger }));
  const tls =
    settings.tlsCert && settings.tlsKey
      ? { cert: readFileSync(settings.tlsCert), key: readFileSync(settings.tlsKey) }
      : undefined;
  const grpcHost = settings.grpcHost ?? settings.host;
  const separateGrpc =
    httpServed &&
    ((settings.grpcPort !== undefined && (settings.grpcPort === 0 || settings.grpcPort !== settings.port)) ||
      grpcHost !== settings.host);
  const http = tracedHttp("iac-code.a2a", httpServed ? koaHandler : notServed);
  const listener = await listenOnePort({
    host: httpServed ? settings.host : grpcHost,
    port: httpServed ? settings.port : (settings.grpcPort ?? settings.port),
    http1: http,
    http2: separateGrpc ? http : splitGrpc(grpc, http),
    tls,
    timeouts: settings.timeouts,
  });
  let grpcListener: OnePortListener | undefined;
  if (separateGrpc) {
    try {
      grpcListener = await listenOnePort({
        host: grpcHost,
        port: settings.grpcPort ?? 0,
        http1: notServed,
        http2: splitGrpc(grpc, notServed),
        tls,
        timeouts: settings.timeouts,
      });
    } catch (error) {
      await listener.close(0);
      throw error;
    }
  }
  const urlHost = (host: string): string => (host.includes(":") ? `[${host}]` : host);
  const scheme = tls ? "https" : "http";
  const base = `${scheme}://${urlHost(settings.host)}:${listener.port}`;
  const grpcTarget = grpcListener
    ? `${urlHost(grpcHost)}:${grpcListener.port}`
    : `${urlHost(listener.host)}:${listener.port}`;
  const restUrl = httpServed ? base : undefined;
  const url = httpServed ? `${base}/` : grpcTarget;
  const extraInterfaces = [
    ...(restUrl ? [{ url: restUrl, protocolBinding: "HTTP+JSON" }] : []),
    { url: grpcTarget, protocolBinding: "GRPC" },
  ];
  return {
    url,
    restUrl,
    grpcTarget,
    port: listener.port,
    interfaces: [...(httpServed ? [{ url, protocolBinding: "JSONRPC" }] : []), ...extraInterfaces],
    tls: Boolean(tls),
    grpcSeparatePort: Boolean(grpcListener),
    close: async (graceMs) => {
      await Promise.all([listener.close(graceMs), grpcListener?.close(graceMs)]);
    },
  };
}
