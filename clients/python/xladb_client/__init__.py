"""xladb_client: a Python client of xladbd, the xladb gRPC service (proto/xladb/v1/xladb.proto, docs/api.md).

    from xladb_client import Client, to_pandas
    client = Client("127.0.0.1:50051", token=None)
    df = to_pandas(client.peak_memory_trend(module="jit_train_step", metric="TOTAL_BYTES"))

Client has one method per RPC, named after it in snake_case (list_runs, peak_memory_trend, check_run, query, …),
taking the request's fields as keyword arguments and returning the protobuf messages; upload() sends a folder
with progress. to_rows() and to_pandas() turn answers into rows. The generated modules are here too:
xladb_pb2 and xladb_pb2_grpc (xladb.v1), health_pb2/health_pb2_grpc and reflection_pb2/reflection_pb2_grpc
(gRPC's health and reflection services); they are made at build time from the proto (setup.py).

Errors: calls raise grpc.RpcError (with .code() and .details()), as gRPC raises it; the rest is in each docstring.
Thread safety: a Client may be shared between threads (its gRPC channel is thread-safe).
"""
from ._proto import health_pb2, health_pb2_grpc, reflection_pb2, reflection_pb2_grpc, xladb_pb2, xladb_pb2_grpc
from .client import Client, rpc_methods, snake_case
from .rows import message_to_dict, to_pandas, to_rows

__all__ = ["Client", "to_rows", "to_pandas", "message_to_dict", "rpc_methods", "snake_case", "xladb_pb2",
           "xladb_pb2_grpc", "health_pb2", "health_pb2_grpc", "reflection_pb2", "reflection_pb2_grpc"]
