/** Fake instance metadata services for the node agent's tests: real HTTP on loopback. See README.md. */

export { type Ec2ScheduledEvent, FakeEc2Metadata, type FakeEc2Options } from './aws.ts';
export { type AzureScheduledEvent, FakeAzureMetadata, type FakeAzureOptions } from './azure.ts';
export { FakeGceMetadata, type FakeGceOptions } from './gcp.ts';
export { FakeHttpServer, type FakeReply, type RecordedRequest } from './http.ts';
