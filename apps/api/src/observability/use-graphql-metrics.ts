import { createCounter, createHistogram, usePrometheus, type FillLabelsFnParams } from '@graphql-yoga/plugin-prometheus';
import { persistedOperationOf } from '@latchkey/persisted';
import { getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Registry } from 'prom-client';

export interface GraphQLMetricsOptions {
  /** the instance's registry */
  registry: Registry;
  /**
   * Duration histograms of the parse, validate, context (token check) and execute/subscribe phases, on top of
   * the operation and error counters.
   * @default true
   */
  phaseDurations?: boolean;
}

type LabelName = 'operation_name' | 'operation_type';
const OTHER = 'other';
const LABEL_NAMES: LabelName[] = ['operation_name', 'operation_type'];
const PHASE_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/**
 * The labels of one operation. Its name only when the document is an allowlisted one (PERSISTED_ALLOWLIST_FILE or
 * PERSISTED_MODE=allowlist): that text is the server's, so its names are a fixed set. Query text, and APQ
 * registrations (text a client chose), are `other`, whatever they call themselves: every distinct label value is
 * a series kept for the life of the process, so client-chosen names would be a memory leak. The type comes from
 * the operation the document actually runs, never from a request parameter.
 */
function labelsOf(params: FillLabelsFnParams, context: unknown): Record<LabelName, string> {
  const document = params.document;
  if (!document) return { operation_name: OTHER, operation_type: OTHER };
  const requestParams = (context as { params?: { operationName?: string | null } } | undefined)?.params;
  const operation = getOperationAST(document, requestParams?.operationName);
  if (!operation) return { operation_name: OTHER, operation_type: OTHER };
  const trusted = persistedOperationOf(requestParams)?.source === 'allowlist';
  return { operation_name: trusted && operation.name ? operation.name.value : OTHER, operation_type: operation.operation };
}

/**
 * GraphQL metrics through @graphql-yoga/plugin-prometheus, configured so that no label value comes from a client:
 * every metric has its own label function (the plugin's defaults label the client's `operationName`, and its HTTP
 * histogram the full URL, query string included), the HTTP histogram is off (the HTTP front measures every route),
 * and the plugin serves no endpoint (the metrics listener does). Errors by code are counted where the codes are
 * final (useErrorCodes); here errors are counted by operation and phase.
 */
export function useGraphQLMetrics({ registry, phaseDurations = true }: GraphQLMetricsOptions): Plugin {
  const phase = <Phase>(name: string, help: string) =>
    phaseDurations
      ? createHistogram<Phase, LabelName>({ registry, histogram: { name, help, labelNames: LABEL_NAMES, buckets: PHASE_BUCKETS }, fillLabelsFn: labelsOf })
      : false;
  return usePrometheus({
    registry,
    endpoint: false,
    metrics: {
      graphql_envelop_request: createCounter({
        registry,
        counter: { name: 'latchkey_graphql_operations_total', help: 'GraphQL operations executed or subscribed, by allowlisted name (else `other`) and type', labelNames: LABEL_NAMES },
        fillLabelsFn: labelsOf,
      }),
      graphql_envelop_error_result: createCounter({
        registry,
        counter: { name: 'latchkey_graphql_operation_errors_total', help: 'GraphQL errors by operation and the phase that raised them (parse, validate, context, execute, subscribe)', labelNames: [...LABEL_NAMES, 'phase'] },
        fillLabelsFn: (params: FillLabelsFnParams & { errorPhase?: string }, context) => ({ ...labelsOf(params, context), phase: params.errorPhase ?? OTHER }),
      }),
      graphql_envelop_phase_parse: phase<'parse'>('latchkey_graphql_parse_duration_seconds', 'Time spent parsing GraphQL documents (cache hits included)'),
      graphql_envelop_phase_validate: phase<'validate'>('latchkey_graphql_validate_duration_seconds', 'Time spent validating GraphQL documents (cache hits included)'),
      graphql_envelop_phase_context: phase<'context'>('latchkey_graphql_context_duration_seconds', 'Time spent building the request context (the access-token check)'),
      graphql_envelop_phase_execute: phase<'execute'>('latchkey_graphql_execute_duration_seconds', 'Time spent executing queries and mutations'),
      graphql_envelop_phase_subscribe: phase<'subscribe'>('latchkey_graphql_subscribe_duration_seconds', 'Time spent setting up subscriptions'),
      // Off: a duplicate of the execute phase (request_duration), a costly summary, a document walk per parse
      // (deprecated_field), per-resolver timing, and an HTTP histogram labelled with the client's URL.
      graphql_envelop_request_duration: false,
      graphql_envelop_request_time_summary: false,
      graphql_envelop_deprecated_field: false,
      graphql_envelop_schema_change: false,
      graphql_envelop_execute_resolver: false,
      graphql_yoga_http_duration: false,
    },
  });
}
