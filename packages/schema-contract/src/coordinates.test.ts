import { buildSchema, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { operationUsage, splitOperations } from './coordinates.js';

const schema = buildSchema(`
  type Query {
    status: Status!
    documents(filter: Filter, first: Int = 20, order: Order @deprecated(reason: "Always newest first.")): [Document!]!
  }
  type Status { service: String!, time: String! @deprecated(reason: "Use serverTime."), serverTime: String! }
  type Document { id: ID!, title: String!, state: State! }
  input Filter { status: [State!], archived: Boolean @deprecated(reason: "Use status.") }
  enum State { DRAFT, PUBLISHED, RETIRED @deprecated(reason: "Use PUBLISHED.") }
  enum Order { NEWEST }
`);

describe('what an operation uses of the schema', () => {
  it('names each type, field, argument, input field and enum value it writes, and the deprecated ones with their reasons', () => {
    const usage = operationUsage(
      schema,
      parse(`query Q($first: Int) {
        status { service time __typename }
        documents(first: $first, order: NEWEST, filter: { status: [RETIRED], archived: false }) @include(if: true) { ...D }
      }
      fragment D on Document { id state }`),
    );
    expect([...usage.coordinates].sort()).toEqual(
      [
        'Query.status',
        'Status',
        'Status.service',
        'String',
        'Status.time',
        'Query.documents',
        'Document',
        'Query.documents.first',
        'Int',
        'Query.documents.order',
        'Order',
        'Order.NEWEST',
        'Query.documents.filter',
        'Filter',
        'Filter.status',
        'State.RETIRED',
        'State',
        'Filter.archived',
        'Boolean',
        'Document.id',
        'ID',
        'Document.state',
      ].sort(),
    );
    expect(usage.deprecated).toEqual([
      { coordinate: 'Status.time', reason: 'Use serverTime.' },
      { coordinate: 'Query.documents.order', reason: 'Always newest first.' },
      { coordinate: 'State.RETIRED', reason: 'Use PUBLISHED.' },
      { coordinate: 'Filter.archived', reason: 'Use status.' },
    ]);
  });

  it('judges only the operation that runs and the fragments it spreads', () => {
    const document = parse(`
      query Old { status { time } }
      query New { status { serverTime } ...S }
      fragment S on Query { status { service } }
      fragment Unused on Status { time }`);
    expect(operationUsage(schema, document, 'New').deprecated).toEqual([]);
    expect(operationUsage(schema, document, 'Old').deprecated).toEqual([{ coordinate: 'Status.time', reason: 'Use serverTime.' }]);
    expect(operationUsage(schema, document).coordinates.size).toBe(0); // two operations and no name: none runs
    expect(splitOperations(document).map(({ name, document: own }) => [name, own.definitions.length])).toEqual([
      ['Old', 1],
      ['New', 2],
    ]);
  });

  it('skips names the schema does not have (validation reports them)', () => {
    const usage = operationUsage(schema, parse('{ status { gone service } missing }'));
    expect([...usage.coordinates].sort()).toEqual(['Query.status', 'Status', 'Status.service', 'String']);
  });
});
