/**
 * A SendTaskSuccess endpoint on 127.0.0.1 for tests (Step Functions has no local stand-in here): the
 * real `@aws-sdk/client-sfn` — in a forwarder child process, with `AWS_ENDPOINT_URL_SFN` pointing here —
 * reaches it with the AWS JSON 1.0 protocol. Every call is recorded; each token is handed to `deliver`
 * (an embedded executor's sendTaskSuccess, so that the wake-up ends a real waiting Task), and a token
 * nobody waits with is answered as Step Functions answers it: HTTP 400, TaskDoesNotExist. `loseWakeUps()`
 * records calls but delivers nothing (a wake-up lost on the way). Signatures are not checked.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SendTaskSuccessCall {
  readonly taskToken: string;
  readonly output: string;
  /** Whether a waiting Task took it (false: TaskDoesNotExist, or lost on purpose). */
  readonly delivered: boolean;
}

export interface StepFunctionsEndpoint {
  /** `http://127.0.0.1:<port>`: set as AWS_ENDPOINT_URL_SFN. */
  readonly url: string;
  readonly calls: readonly SendTaskSuccessCall[];
  /** Record but deliver nothing, answering success (the wake-up lost after Step Functions took it) until healed. */
  loseWakeUps(): () => void;
  close(): Promise<void>;
}

const TARGET = 'AWSStepFunctions.SendTaskSuccess';

async function bodyOf(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startStepFunctionsEndpoint(
  deliver: (token: string) => boolean,
  port = 0,
): Promise<StepFunctionsEndpoint> {
  const calls: SendTaskSuccessCall[] = [];
  const faults = { losing: false };
  const server = createServer(async (request, response) => {
    const reply = (status: number, body: object) => {
      response.writeHead(status, { 'content-type': 'application/x-amz-json-1.0' });
      response.end(JSON.stringify(body));
    };
    if (request.headers['x-amz-target'] !== TARGET) {
      reply(400, { __type: 'UnknownOperationException', message: `${request.headers['x-amz-target']}` });
      return;
    }
    const input = JSON.parse(await bodyOf(request)) as { taskToken?: string; output?: string };
    const taskToken = input.taskToken ?? '';
    const delivered = !faults.losing && deliver(taskToken);
    calls.push({ taskToken, output: input.output ?? '', delivered });
    if (delivered || faults.losing) reply(200, {});
    else reply(400, { __type: 'TaskDoesNotExist', message: 'Task does not exist anymore' });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    loseWakeUps: () => {
      faults.losing = true;
      return () => {
        faults.losing = false;
      };
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
