from lightning.pytorch.cli import LightningCLI


def cli_main():
    LightningCLI()


if __name__ == "__main__":
    cli_main()
