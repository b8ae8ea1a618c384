from lightning.pytorch.cli import LightningCLI


class CLI(LightningCLI):
    def add_arguments_to_parser(self, parser):
        parser.link_arguments("data.batch_size", "model.batch_size")


if __name__ == "__main__":
    CLI()
