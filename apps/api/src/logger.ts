import pino, { type DestinationStream, type Logger } from 'pino';

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'latchkey' },
      timestamp: pino.stdTimeFunctions.isoTime,
      serializers: { err: pino.stdSerializers.err },
      // Belt and braces: nothing in the app logs these, and if anything ever does they are blanked.
      redact: {
        paths: ['authorization', 'headers.authorization', 'token', 'variables', '*.token', '*.variables', 'password'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
