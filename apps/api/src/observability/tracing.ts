import {
  context,
  diag,
  DiagLogLevel,
  propagation,
  trace,
  type Exception,
  type Span,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { Config } from '../config/load.js';

export interface Tracing {
  /** the Yoga plugin that makes one span per executed operation */
  plugin: Plugin;
  /** Exports what is still buffered, then stops (idempotent). */
  shutdown(): Promise<void>;
}

/** The SDK registers process-wide providers: one traced service per process at a time. */
let running = false;

const ERROR_CODE = /^[A-Z][A-Z0-9_]{0,63}$/;

/**
 * Replaces @envelop/opentelemetry's error record. It records `JSON.stringify(result.errors)`, taken before errors
 * are masked: messages that can carry a variable's value ("Variable "$email" got invalid value ...") or a database
 * error's details. Only the codes leave the process (an error without one is `UNCODED`: masked later, or a
 * variable error that gets its code later).
 */
function recordErrorCodes(this: Span, exception: Exception): void {
  let codes: string[] = [];
  try {
    const errors = JSON.parse(typeof exception === 'string' ? exception : (exception.message ?? '[]')) as {
      extensions?: { code?: unknown };
    }[];
    codes = errors.map(({ extensions }) =>
      typeof extensions?.code === 'string' && ERROR_CODE.test(extensions.code) ? extensions.code : 'UNCODED',
    );
  } catch {
    // not the plugin's JSON: record that there were errors, nothing else
  }
  this.addEvent('exception', { 'exception.type': 'GraphQLError', 'graphql.error.count': codes.length, 'graphql.error.codes': codes });
}

/** A provider whose spans record errors by code only (see recordErrorCodes). */
function codesOnly(provider: TracerProvider): TracerProvider {
  return {
    getTracer(name, version, options) {
      const tracer = provider.getTracer(name, version, options);
      const redacted: Tracer = {
        startSpan(spanName, spanOptions, parent) {
          const span = tracer.startSpan(spanName, spanOptions, parent);
          span.recordException = recordErrorCodes;
          return span;
        },
        startActiveSpan: tracer.startActiveSpan.bind(tracer),
      };
      return redacted;
    },
  };
}

/**
 * OpenTelemetry traces (OTEL_EXPORTER_OTLP_ENDPOINT): @opentelemetry/sdk-node with an OTLP/HTTP exporter, its
 * provider passed to @envelop/opentelemetry. What a span may carry is fixed here, not left to defaults: no
 * variables, no result, no resolver spans (their arguments), no document text (inline arguments are values too),
 * error codes only. No automatic instrumentation is loaded (HTTP spans would carry URLs, query strings included).
 * Besides the variables config.ts reads, the SDK honours its own standard ones (OTEL_EXPORTER_OTLP_HEADERS,
 * OTEL_EXPORTER_OTLP_TIMEOUT, OTEL_TRACES_SAMPLER, OTEL_RESOURCE_ATTRIBUTES, OTEL_BSP_*, OTEL_LOG_LEVEL, ...).
 *
 * The SDK is loaded here, when tracing is configured, not at start-up: it adds about 18 MB to the resident memory
 * of a process that never exports a span.
 */
export async function startTracing(options: NonNullable<Config['observability']['tracing']>, logger: Logger): Promise<Tracing> {
  const [{ useOpenTelemetry }, { OTLPTraceExporter }, { NodeSDK, resources }] = await Promise.all([
    import('@envelop/opentelemetry'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/sdk-node'),
  ]);
  if (running) throw new Error('OpenTelemetry tracing is already running in this process (its providers are process-wide)');
  running = true;
  const log = logger.child({ component: 'opentelemetry' });
  // The SDK's own complaints (an unreachable collector, say) go to the log; OTEL_LOG_LEVEL replaces this.
  diag.setLogger(
    {
      error: (message, ...args) => log.error({ args }, message),
      warn: (message, ...args) => log.warn({ args }, message),
      info: () => {},
      debug: () => {},
      verbose: () => {},
    },
    { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
  const sdk = new NodeSDK({
    serviceName: options.serviceName,
    traceExporter: new OTLPTraceExporter({ url: options.tracesUrl }),
    // Host and OTEL_RESOURCE_ATTRIBUTES; not the process detector, whose command line could carry anything.
    resourceDetectors: [resources.envDetector, resources.hostDetector],
    instrumentations: [],
    // Traces only: without these the SDK would also start exporting OTLP metrics and logs.
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  const plugin = useOpenTelemetry(
    { variables: false, result: false, resolvers: false, defaultResolvers: false, document: false },
    codesOnly(trace.getTracerProvider()),
  ) as Plugin;
  let stopping: Promise<void> | undefined;
  return {
    plugin,
    shutdown: () =>
      (stopping ??= sdk
        .shutdown()
        .catch((error: unknown) => log.warn({ err: error }, 'flushing traces failed'))
        .finally(() => {
          // Released for the next service of this process (tests start several, one after another).
          trace.disable();
          context.disable();
          propagation.disable();
          diag.disable();
          running = false;
        })),
  };
}
