from thinkfix.cli import main

main()
