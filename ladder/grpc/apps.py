from django.apps import AppConfig


class LadderGrpcConfig(AppConfig):
    """Registered only so ``manage.py grpcserver`` is found."""

    name = "ladder.grpc"
    label = "ladder_grpc"
    verbose_name = "Ladder gRPC service"
