# The cuzkd proving service, version 1.
#
# Versioning: the interface is `ProvingV1`. Fields and methods are only ever
# appended (Cap'n Proto keeps that wire compatible); an incompatible change
# gets a new interface `ProvingV2` served beside this one. `ServerInfo` tells a
# client which schema version and limits the daemon runs.
#
# Errors are data, not exceptions: every method returns a `Result`-like union
# whose error arm carries an `ErrorKind` telling the client what to do.
# Cap'n Proto exceptions are reserved for transport failures and bugs.
@0xd4c3a1f05be6e2a1;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("cuzk::rpc::schema");

const schemaVersion :UInt32 = 1;

enum ErrorKind {
  invalidInput @0;   # the request is malformed, names an unknown circuit/size, or needs more memory
                     # than the daemon's whole budget (memory.total_budget): do not retry
  notFound @1;       # no such job (never existed, or its result expired)
  overloaded @2;     # the queue is full: retry later
  cancelled @3;      # the job was cancelled
  unimplemented @4;  # the proof kind is declared but not implemented by this daemon
  internal @5;       # a bug or an unexpected failure inside the daemon
  timeout @6;        # await: the timeout elapsed before the job finished (the job continues)
  shuttingDown @7;   # the daemon is draining and accepts no new work
  unauthenticated @8; # TCP login: missing or wrong token (do not retry with the same token)
}

struct Error {
  kind @0 :ErrorKind;
  message @1 :Text;
}

enum Priority {
  unspecified @0;    # the kind's default (groth16 demo: normal)
  low @1;
  normal @2;
  high @3;
  critical @4;
}

enum JobState {
  queued @0;
  running @1;
  done @2;
  failed @3;
  cancelled @4;
}

# Built-in circuits a daemon can prove without external inputs.
enum BuiltinCircuit {
  demo @0;           # the x^5 chain of src/circuits/demo.hpp
}

struct Groth16Builtin {
  circuit @0 :BuiltinCircuit;
  size @1 :UInt32;        # demo: log2 of the domain (3 .. the daemon's max), rounds fill it
  seed @2 :UInt64;        # selects the witness (demo: x_0 = seed)
}

# Filecoin proof kinds. Each proof (192 B per partition) is verified by the
# daemon before it is returned.
struct PoRepC2 {
  vanillaProof @0 :Data;  # C1 output (SealCommitPhase1Output JSON); result: partitions x 192 B
  sectorNumber @1 :UInt64;
  minerId @2 :UInt64;
  registeredProof @3 :UInt64;
}
# One partition of a WindowPoSt: the bincode FallbackPoStSectorProof of each
# of its sectors (any order: proved in sector number order; duplicates are
# refused), the 32-byte randomness (masked rand[31] &= 0x3f as lotus does),
# the partition index (it only enters the challenges inside the vanilla
# proofs), the miner actor id (the prover id is its LEB128) and the
# RegisteredPoStProof (StackedDrgWindow32GiBV1_2 = 13). Result: 192 B.
struct WindowPost {
  vanillaProofs @0 :List(Data);
  randomness @1 :Data;
  partitionIndex @2 :UInt32;
  minerId @3 :UInt64;
  registeredProof @4 :UInt64;
}
# The one challenged sector's vanilla proof (66 inclusion proofs), as above
# (StackedDrgWinning32GiBV1 = 3). Result: 192 B.
struct WinningPost {
  vanillaProofs @0 :List(Data);
  randomness @1 :Data;
  minerId @2 :UInt64;
  registeredProof @3 :UInt64;
}
# One bincode PartitionProof per partition of the sector (16 for 32 GiB), the
# three 32-byte commitments, and the RegisteredUpdateProof (StackedDrg32GiBV1
# = 3). Result: partitions x 192 B.
struct SnapDeals {
  vanillaProofs @0 :List(Data);
  commROld @1 :Data;
  commRNew @2 :Data;
  commDNew @3 :Data;
  registeredProof @4 :UInt64;
}

struct ProofRequest {
  requestId @0 :Text;     # caller's idempotency key; empty = the daemon assigns one
  priority @1 :Priority;
  kind :union {
    groth16 @2 :Groth16Builtin;
    porepC2 @3 :PoRepC2;
    windowPost @4 :WindowPost;
    winningPost @5 :WinningPost;
    snapDeals @6 :SnapDeals;
  }
  # When the proof is due, ms since the Unix epoch (0: none). A job that ends
  # after it is still proved and is reported late (JobRef.deadlineMissed,
  # cuzk_deadline_missed_total).
  deadlineUnixMs @7 :UInt64;
}

struct JobRef {
  jobId @0 :UInt64;       # daemon-assigned, never reused within one daemon run
  requestId @1 :Text;
  state @2 :JobState;
  queuePosition @3 :UInt32;   # rank by priority among queued jobs (0 = next); 0 if not queued
  deduplicated @4 :Bool;      # true when the request id matched an existing job
  deadlineMissed @5 :Bool;    # ended after the request's deadline, or still running past it
}

struct Timings {
  queueMs @0 :UInt64;
  paramsMs @1 :UInt64;        # parameter load or development generation
  synthesisMs @2 :UInt64;
  proveMs @3 :UInt64;
  verifyMs @4 :UInt64;
  totalMs @5 :UInt64;
}

struct ProofResult {
  job @0 :JobRef;
  proof @1 :Data;             # 192 bytes per proof (bellperson encoding), concatenated
  publicInputs @2 :List(Data);# each 32 bytes, little-endian canonical Fr (ONE excluded)
  verifyingKey @3 :Data;      # bellperson .vk encoding of the key the proof verifies under
  timings @4 :Timings;
}

struct SubmitResponse {
  union {
    job @0 :JobRef;
    error @1 :Error;
  }
}

struct AwaitResponse {
  union {
    result @0 :ProofResult;
    error @1 :Error;          # failed/cancelled jobs and timeouts arrive here
  }
}

struct JobIdOrRequest {
  union {
    jobId @0 :UInt64;
    requestId @1 :Text;
  }
}

struct CancelResponse {
  union {
    job @0 :JobRef;           # state after the request (cancelled, or running while it stops)
    error @1 :Error;
  }
}

struct QueueStatus {
  priority @0 :Priority;
  queued @1 :UInt32;
}

struct JobSummary {
  job @0 :JobRef;
  kind @1 :Text;
  stage @2 :Text;
  ageMs @3 :UInt64;
}

struct WorkerStatus {
  workerId @0 :UInt32;
  busy @1 :Bool;
  jobId @2 :UInt64;
}

struct ParamsStatus {
  circuitId @0 :Text;
  bytes @1 :UInt64;
}

struct Status {
  schemaVersion @0 :UInt32;
  uptimeMs @1 :UInt64;
  draining @2 :Bool;
  queues @3 :List(QueueStatus);
  queueCapacity @4 :UInt32;
  jobs @5 :List(JobSummary);
  workers @6 :List(WorkerStatus);
  loadedParams @7 :List(ParamsStatus);
  residentBytes @8 :UInt64;   # process RSS
  paramsBytes @9 :UInt64;     # sum of loadedParams
  completedTotal @10 :UInt64;
  failedTotal @11 :UInt64;
  cancelledTotal @12 :UInt64;
  maxMessageBytes @13 :UInt64;
  devices @14 :List(DeviceStatus);       # proving back ends: GPUs, then the CPU
  srsResidency @15 :List(SrsResidency);   # parameters held, per tier
  memoryBudget @16 :MemoryBudgetStatus;   # host-memory budget of the daemon
  cpuRetriesTotal @17 :UInt64;            # GPU proofs re-proved on the CPU after failing verification
  loadingParams @18 :List(ParamsLoad);    # parameter files being read now
}

# A parameter file being read: the read and the decoding behind it.
struct ParamsLoad {
  file @0 :Text;
  fileBytes @1 :UInt64;
  readBytes @2 :UInt64;
  decodedBytes @3 :UInt64;
  elapsedMs @4 :UInt64;
}

# One proving back end (a GPU or the CPU) and what it is doing.
struct DeviceStatus {
  index @0 :UInt32;
  name @1 :Text;               # "cpu" or "cuda:<ordinal> <device name>"
  ordinal @2 :Int32;           # CUDA ordinal; -1 for the CPU
  busy @3 :Bool;
  jobId @4 :UInt64;            # when busy
  partition @5 :UInt32;        # when busy
  stage @6 :Text;
  jobsPlaced @7 :UInt32;
  proofsDone @8 :UInt64;
  verifyFailures @9 :UInt64;
  residentSrs @10 :Text;       # parameters resident on the device ("" none)
  residentSrsBytes @11 :UInt64;
  memoryTotalBytes @12 :UInt64;
  memoryFreeBytes @13 :UInt64;
  proverStage @14 :Text;       # GPU prover stage inside a prove ("" none)
  proverStageMs @15 :UInt64;   # elapsed in that stage
  proverStream @16 :UInt64;    # CUDA stream handle value of the stage (0: default stream)
  proverStreams @17 :UInt32;   # CUDA streams the prover owns (0: unknown)
  proverEvents @18 :UInt32;    # CUDA events the prover owns (0: unknown)
  r1csMatricesBytes @19 :UInt64;  # device bytes of R1CS matrices kept for a, b, c on the device (0: none)
  msmScratchBytes @20 :UInt64;    # device bytes the GPU's MSM scratch arena holds now (0: none, or the CPU)
  msmScratchLimitBytes @21 :UInt64;  # the limit that arena may grow to (0: the CPU)
}

struct SrsResidency {
  srs @0 :Text;                # circuit id or parameter file
  tier @1 :Text;               # "host", "device" or "pinned" (a GPU's SRS part in page-locked host memory)
  device @2 :Int32;            # device index for tiers "device" and "pinned", else -1
  bytes @3 :UInt64;
}

struct MemoryBudgetStatus {
  totalBytes @0 :UInt64;       # 0: unlimited
  reservedBytes @1 :UInt64;
  availableBytes @2 :UInt64;
  peakReservedBytes @3 :UInt64;
  waiting @4 :UInt32;          # requests queued for memory
  waitingBytes @5 :UInt64;
  keptWitnessBytes @6 :UInt64; # of reservedBytes: witness memory kept for the next run
}

struct ParamsResponse {
  union {
    ok :group {
      alreadyLoaded @0 :Bool;
      loadMs @1 :UInt64;
      generated @3 :Bool;       # development parameters generated by this call
      # preloadSrs: GPU back ends (one per device and worker) and how many of
      # them hold the set's SRS once the preload returns (the others upload it
      # with their first job of the set). Both 0 without GPUs, and from
      # daemons older than these fields.
      gpus @4 :UInt32;
      gpusHolding @5 :UInt32;
    }
    error @2 :Error;
  }
}

struct JobEvent {
  jobId @0 :UInt64;
  requestId @1 :Text;
  state @2 :JobState;
  stage @3 :Text;             # queued / params / synthesis / prove / verify / done ...
  elapsedMs @4 :UInt64;       # since submission
  error @5 :Error;            # set for failed / cancelled
}

interface EventSink {
  event @0 (event :JobEvent) -> ();
}

# A job event the daemon kept (recentEvents), stamped when it happened.
struct RecentEvent {
  event @0 :JobEvent;
  unixMs @1 :UInt64;          # wall clock of the daemon when the event was emitted
}

interface ProvingV1 {
  submit @0 (request :ProofRequest) -> (response :SubmitResponse);
  # timeoutMs = 0: wait without a deadline.
  await @1 (job :JobIdOrRequest, timeoutMs :UInt64) -> (response :AwaitResponse);
  prove @2 (request :ProofRequest, timeoutMs :UInt64) -> (response :AwaitResponse);
  cancel @3 (job :JobIdOrRequest) -> (response :CancelResponse);
  status @4 () -> (status :Status);
  metrics @5 () -> (text :Text);                     # Prometheus text exposition 0.0.4
  preloadSrs @6 (circuitId :Text) -> (response :ParamsResponse);
  evictSrs @7 (circuitId :Text) -> (response :ParamsResponse);
  # Streams job events to `sink` until the returned handle is dropped or the
  # sink fails.
  watch @8 (sink :EventSink) -> (handle :WatchHandle);
  # The last job events the daemon keeps (a bounded ring, oldest first), at
  # most `max` of them (0: all it keeps); `total` counts every event since the
  # daemon started. Lets a client that starts watching now show what already
  # happened (`cuzkctl watch --once`). Daemons older than this method answer
  # unimplemented.
  recentEvents @9 (max :UInt32) -> (events :List(RecentEvent), total :UInt64);
}

interface WatchHandle {}

# The bootstrap capability of a TCP listener (Unix sockets bootstrap
# ProvingV1 directly: file permissions authenticate there). Nothing but
# `login` is served until the shared bearer token matched; the connection is
# closed if no login succeeds within the daemon's auth timeout. Over TLS the
# token travels encrypted; the comparison is constant-time.
interface Login {
  login @0 (token :Data) -> (response :LoginResponse);
}

struct LoginResponse {
  union {
    service @0 :ProvingV1;
    error @1 :Error;          # kind = unauthenticated
  }
}
