// The OpenTelemetry SDK side of tracing: a tracer provider exporting OTLP over
// HTTP (JSON or protobuf) in batches, the AsyncLocalStorage context manager and
// the W3C trace-context propagator, registered globally. Imported (dynamically)
// only when an endpoint is configured: a server without one never loads it.
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { context, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, TracerProvider, type SpanExporter } from "@opentelemetry/sdk-trace";
import { VERSION } from "../../version.js";
import type { TracingSettings } from "./settings.js";

export interface SdkTracing {
  /** Exports every ended span now. */
  flush(): Promise<void>;
  /** Flushes, then unregisters the provider, context manager and propagator. */
  shutdown(): Promise<void>;
}

async function exporterFor(settings: TracingSettings): Promise<SpanExporter> {
  // The URL is given explicitly: the exporter would otherwise read process.env, not the server's env.
  if (settings.protocol === "http/json") {
    const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-http");
    return new OTLPTraceExporter({ url: settings.url });
  }
  const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-proto");
  return new OTLPTraceExporter({ url: settings.url });
}

export async function registerSdk(settings: TracingSettings & { serviceName: string }): Promise<SdkTracing> {
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      "service.name": settings.serviceName,
      "service.version": VERSION,
      // Tells replicas (and an adapter from its A2A server on one host) apart in a trace viewer.
      "service.instance.id": `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
    }),
    spanProcessors: [new BatchSpanProcessor({ exporter: await exporterFor(settings) })],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  trace.setGlobalTracerProvider(provider);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  return {
    flush: () => provider.forceFlush(),
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}
